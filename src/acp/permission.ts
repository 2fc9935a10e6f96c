/**
 * Approvals as ACP permission requests. When the approval policy asks (a command outside a
 * working sandbox, an escalation, an ask rule), the pipeline calls this handler; it sends
 * `session/request_permission` and maps the client's choice onto the policy:
 *
 *   allow-once    "Allow once"     (allow_once)    → allowed-once
 *   allow-always  "Always allow"   (allow_always)  → allowed-once plus the session rule naming this
 *                                                    call (`approval/rule`: later calls it matches
 *                                                    run without asking, resumes and forks too)
 *   reject-once   "Reject"         (reject_once)   → rejected
 *   reject-always "Always reject"  (reject_always) → rejected, and later asks for the same tool
 *                                                    and subject are rejected without asking
 *   cancelled, a failed request, an unknown option → cancelled / rejected (fail closed)
 *   an answer not of the protocol's shape (`{}`, no `outcome`…) → rejected, the log naming what
 *                                                    was wrong (`invalid`)
 *
 * The pipeline logs `approval/asked` and `approval/decided` (and `approval/rule`); this handler
 * adds `acp/permission` (ignorable) naming the option the client chose, or the remembered answer
 * that decided, so every decision and where it came from is in the log.
 */
import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk/unstable';
import type { ApprovalOutcome } from '../session/events.js';
import type { Session } from '../session/session.js';
import type { ApprovalAnswer, ApprovalHandler, ApprovalRequest } from '../tools/pipeline.js';
import { ruleFor } from '../tools/permissions/rules.js';
import { toolKind, toolTitle } from './tool-view.js';

export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject-always', name: 'Always reject', kind: 'reject_always' },
];

export interface AcpPermissionData {
  approvalId: string;
  callId: string;
  /** `asked`: the client answered; `remembered`: an earlier "always reject" answered. */
  via: 'asked' | 'remembered';
  outcome: ApprovalOutcome;
  optionId?: string;
  /** The session rule an "always allow" added. */
  rule?: string;
  /** What was wrong with an answer not of the protocol's shape (then `outcome` is `rejected`). */
  invalid?: string;
}

declare module '../session/events.js' {
  interface SessionEventMap {
    'acp/permission': AcpPermissionData;
  }
}

export interface PermissionDeps {
  sessionId: string;
  session: Session;
  /** The session's workspace: a rule names a path as policy resolves it (`./a/../b.txt` is `b.txt`). */
  workspace: string;
  request(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
}

function argsText(args: unknown): string {
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return '';
  }
}

export function permissionHandler(d: PermissionDeps): ApprovalHandler {
  const rejected = new Set<string>();
  const log = (data: AcpPermissionData): void => void d.session.append('acp/permission', data, { ignorable: true });

  return async (req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> => {
    const subject = ruleFor(req.toolName, argsText(req.args), d.workspace) ?? JSON.stringify([req.toolName, argsText(req.args)]);
    const base = { approvalId: req.id, callId: req.callId };
    if (rejected.has(subject)) {
      log({ ...base, via: 'remembered', outcome: 'rejected' });
      return { outcome: 'rejected', reason: 'the user chose to always reject this call in this session' };
    }
    const args = (typeof req.args === 'object' && req.args !== null ? req.args : {}) as Record<string, unknown>;
    let response: RequestPermissionResponse;
    try {
      response = await d.request(
        {
          sessionId: d.sessionId,
          toolCall: {
            toolCallId: req.callId,
            title: toolTitle(req.toolName, args),
            kind: toolKind(req.toolName),
            status: 'pending',
            rawInput: args,
            ...(req.reason ? { _meta: { dsh: { reason: req.reason } } } : {}),
          },
          options: [...PERMISSION_OPTIONS],
        },
        signal,
      );
    } catch {
      // The client failed the request, or the turn was cancelled while it was open.
      const outcome: ApprovalOutcome = signal.aborted ? 'cancelled' : 'rejected';
      log({ ...base, via: 'asked', outcome });
      return outcome;
    }
    if (signal.aborted) {
      log({ ...base, via: 'asked', outcome: 'cancelled' });
      return 'cancelled';
    }
    const answer = readResponse(response);
    if (answer.kind === 'invalid') {
      // Rejected, as an unknown option is; the model is told the call was rejected, the log says why.
      log({ ...base, via: 'asked', outcome: 'rejected', invalid: answer.why });
      return 'rejected';
    }
    if (answer.kind === 'cancelled') {
      log({ ...base, via: 'asked', outcome: 'cancelled' });
      return 'cancelled';
    }
    const optionId = answer.optionId;
    const option = PERMISSION_OPTIONS.find((o) => o.optionId === optionId);
    if (!option) {
      log({ ...base, via: 'asked', outcome: 'rejected', optionId: String(optionId) });
      return 'rejected';
    }
    switch (option.kind) {
      case 'allow_once':
        log({ ...base, via: 'asked', outcome: 'allowed-once', optionId: option.optionId });
        return 'allowed-once';
      case 'allow_always': {
        // The rule names exactly this call (its subject escaped); none (a multi-line command): once.
        const exact = ruleFor(req.toolName, argsText(req.args), d.workspace);
        log({ ...base, via: 'asked', outcome: 'allowed-once', optionId: option.optionId, ...(exact ? { rule: exact } : {}) });
        return exact ? { outcome: 'allowed-once', rule: exact } : 'allowed-once';
      }
      case 'reject_always':
        rejected.add(subject);
        log({ ...base, via: 'asked', outcome: 'rejected', optionId: option.optionId });
        return 'rejected';
      default:
        log({ ...base, via: 'asked', outcome: 'rejected', optionId: option.optionId });
        return 'rejected';
    }
  };
}

type ReadResponse = { kind: 'cancelled' } | { kind: 'selected'; optionId: unknown } | { kind: 'invalid'; why: string };

/**
 * The client's answer, checked: the SDK hands it over as the client sent it, and an editor (or
 * anything speaking ACP) may send `{}` or `null`. `RequestPermissionResponse` is
 * `{outcome: {outcome: 'cancelled'} | {outcome: 'selected', optionId}}`.
 */
function readResponse(response: unknown): ReadResponse {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(response)) return { kind: 'invalid', why: `the response is ${JSON.stringify(response) ?? typeof response}, not an object` };
  const outcome = response.outcome;
  if (!isObject(outcome)) return { kind: 'invalid', why: '$.outcome is missing or not an object' };
  if (outcome.outcome === 'cancelled') return { kind: 'cancelled' };
  if (outcome.outcome !== 'selected')
    return { kind: 'invalid', why: `$.outcome.outcome is ${JSON.stringify(outcome.outcome) ?? 'missing'}, not "selected" or "cancelled"` };
  if (!('optionId' in outcome)) return { kind: 'invalid', why: '$.outcome.optionId is missing' };
  return { kind: 'selected', optionId: outcome.optionId };
}
