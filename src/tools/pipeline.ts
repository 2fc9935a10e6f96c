/**
 * The guarded tool pipeline, for one call:
 *
 *   lookup → parse + validate arguments → `tools/pre-execute` (allow | deny | ask → approval)
 *   → `tools/execute` around-wrappers → body → `tools/post-execute` (accept | replace | block)
 *   → finalize → `tools/result` (observe)
 *
 * Every failure becomes an error *result* the model can read, with a stable code; a tool (or a
 * listener) can never fail the turn. Arguments are frozen before policy sees them and cannot be
 * rewritten. A post-execute replacement changes what the model sees; the original output stays
 * in the result's `meta.original`, so the rewrite is auditable from the log.
 */
import { randomUUID } from 'node:crypto';
import type { ContentBlock, UserMessage } from '../model/message.js';
import type { JsonValue } from '../model/json.js';
import type { HookBus } from '../hooks/bus.js';
import type { Session } from '../session/session.js';
import type { ApprovalOutcome } from '../session/events.js';
import { errorChain } from '../model/failure.js';
import type { ToolRegistry } from './registry.js';
import { parseRule } from './permissions/rules.js';
import { isJsonSchemaParameters } from './registry.js';
import { isZodSchema, zodCheck, type ArgsCheck } from './zod-check.js';
import {
  ToolError,
  type ToolCallOutcome,
  type ToolDefinition,
  type ToolOutput,
  type ToolResultValue,
  type ToolRunContext,
} from './types.js';
import type { ToolCallInfo, PreExecuteDecision, PostExecuteDecision } from './hooks.js';
import './hooks.js';

export interface ApprovalRequest {
  id: string;
  toolName: string;
  callId: string;
  args: unknown;
  reason?: string;
}

/**
 * An answer with more than the outcome: `reason` (with `rejected`) is why the user refused, given
 * to the model in the call's result; `rule` (with `allowed-once`) is an allow rule the user added
 * for the rest of the session ("allow for this session"), recorded as `approval/rule` and applied
 * by the permissions plugin.
 */
export type ApprovalAnswer = ApprovalOutcome | { outcome: 'rejected'; reason: string } | { outcome: 'allowed-once'; rule: string };

/** Decide an approval. A UI asks the human; a non-interactive run answers `unavailable`. */
export type ApprovalHandler = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer> | ApprovalAnswer;

export const nonInteractiveApproval: ApprovalHandler = () => 'unavailable';

export interface PipelineDeps {
  registry: ToolRegistry;
  bus: HookBus;
  session: Session;
  cwd: string;
  approve: ApprovalHandler;
}

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

function errorOutcome(code: string, message: string, name = 'ToolError', meta?: JsonValue): ToolCallOutcome {
  const o: ToolCallOutcome = {
    content: text(`Error: ${message}`),
    isError: true,
    error: { name, code },
    deferred: [],
    concludesTurn: false,
  };
  if (meta !== undefined) o.meta = meta;
  return o;
}

function normalize(out: ToolOutput): ToolResultValue {
  if (typeof out === 'string' || Array.isArray(out)) return { content: out };
  if (typeof out !== 'object' || out === null || !('content' in out)) {
    throw new ToolError(
      'INVALID_TOOL_OUTPUT',
      `the tool returned ${out === null ? 'null' : typeof out}, not a string, content blocks, or {content}`,
    );
  }
  return out;
}

function blocksOf(c: ToolResultValue['content']): ContentBlock[] {
  return typeof c === 'string' ? text(c) : c;
}

/** Parse the model's raw argument text: '' means no arguments; invalid JSON stays a string. */
export function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

async function validateArgs(def: ToolDefinition, args: unknown): Promise<ArgsCheck> {
  if (typeof args === 'string') return { ok: false, error: `the arguments are not valid JSON: ${JSON.stringify(args.slice(0, 200))}` };
  const p = def.parameters;
  if (isZodSchema(p)) return zodCheck(p, args);
  if (isJsonSchemaParameters(p) && p.validate) return p.validate(args);
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, error: 'the arguments must be a JSON object' };
  return { ok: true, value: args };
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

export async function runToolCall(call: ToolCallInfo, signal: AbortSignal, deps: PipelineDeps): Promise<ToolCallOutcome> {
  const { registry, bus, session } = deps;
  const deferred: UserMessage[] = [];
  let concludes = false;
  const def = registry.get(call.name);
  if (!def) {
    const names = registry.names();
    return errorOutcome(
      'UNKNOWN_TOOL',
      `there is no tool named "${call.name}"${names.length ? `; available: ${names.join(', ')}` : ''}`,
      'UnknownToolError',
    );
  }
  const parsed = await validateArgs(def, parseArguments(call.rawArguments));
  if (!parsed.ok) return errorOutcome('INVALID_ARGS', `invalid arguments for ${call.name}: ${parsed.error}`, 'InvalidArgsError');
  const args = deepFreeze(parsed.value);

  const makeCtx = (s: AbortSignal): ToolRunContext => ({
    callId: call.callId,
    toolName: call.name,
    signal: s,
    cwd: deps.cwd,
    session,
    bus,
    turn: call.turn,
    step: call.step,
    deferContext(content) {
      deferred.push({
        id: randomUUID(),
        role: 'user',
        content: typeof content === 'string' ? text(content) : content,
        source: { kind: 'plugin', plugin: `tool:${call.name}`, form: 'relay' },
      });
    },
    concludeTurn() {
      concludes = true;
    },
  });
  const ctx = makeCtx(signal);

  // Policy.
  if (signal.aborted) return errorOutcome('ABORTED_BEFORE_DISPATCH', 'tool call aborted before dispatch', 'AbortError');
  const decision = await bus.waterfall('tools/pre-execute', { call, args, ctx }, (): PreExecuteDecision => ({ kind: 'allow' }));
  if (decision.kind === 'deny') return errorOutcome('DENIED', `${call.name} was denied: ${decision.reason}`, 'PermissionDeniedError');
  if (decision.kind === 'ask') {
    const id = randomUUID();
    const asked: { id: string; toolName: string; callId: string; reason?: string } = { id, toolName: call.name, callId: call.callId };
    if (decision.reason !== undefined) asked.reason = decision.reason;
    session.append('approval/asked', asked);
    let answer: ApprovalAnswer;
    try {
      const req: ApprovalRequest = { id, toolName: call.name, callId: call.callId, args };
      if (decision.reason !== undefined) req.reason = decision.reason;
      answer = signal.aborted ? 'cancelled' : await deps.approve(req, signal);
    } catch {
      answer = 'unavailable'; // fail closed
    }
    let { outcome, reason, rule } = readAnswer(answer);
    if (signal.aborted && outcome === 'allowed-once') outcome = 'cancelled';
    if (outcome !== 'allowed-once') rule = undefined;
    // A rule that does not parse is never recorded: the call is then refused, failing closed.
    if (rule !== undefined && !parsesAsAllowRule(rule)) ({ outcome, rule } = { outcome: 'unavailable', rule: undefined });
    session.append('approval/decided', reason !== undefined && outcome === 'rejected' ? { id, outcome, reason } : { id, outcome });
    if (rule !== undefined) session.append('approval/rule', { id, rule, effect: 'allow', scope: 'session' }, { ignorable: true });
    if (outcome !== 'allowed-once') {
      const why =
        outcome === 'unavailable'
          ? 'it needs approval and no one can approve in this session (non-interactive); it was not run'
          : outcome === 'cancelled'
            ? 'the approval was cancelled; it was not run'
            : reason !== undefined
              ? `the user rejected it; it was not run. The user said: ${reason}`
              : 'the user rejected it; it was not run';
      return errorOutcome(
        `APPROVAL_${outcome.toUpperCase()}`,
        `${call.name}: ${why}${decision.reason ? ` (asked because: ${decision.reason})` : ''}`,
        'ApprovalError',
      );
    }
  }
  if (signal.aborted) return errorOutcome('ABORTED_BEFORE_DISPATCH', 'tool call aborted before dispatch', 'AbortError');

  // Body, inside the around-wrappers; the tool's own timeout is the innermost wrapper.
  let output: ToolResultValue;
  try {
    output = await bus.waterfall('tools/execute', { call, args, ctx }, (p) =>
      runBody(def, p.args, p.ctx.signal === ctx.signal ? ctx : makeCtx(p.ctx.signal)),
    );
  } catch (e) {
    if (e instanceof ToolError) return errorOutcome(e.code, e.message, e.name, e.meta);
    // A body that stopped *because of* the cancel is aborted; any other failure stays a failure.
    if (signal.aborted && (e === signal.reason || (e instanceof Error && e.name === 'AbortError'))) {
      return errorOutcome('ABORTED', `${call.name} was aborted`, 'AbortError');
    }
    return errorOutcome('TOOL_FAILED', `${call.name} failed: ${errorChain(e)}`, e instanceof Error ? e.name : 'Error');
  }
  // Cancellation after the body started can only turn a success into ABORTED.
  if (signal.aborted && !output.isError)
    return errorOutcome('ABORTED', `${call.name} finished after the turn was cancelled; its result was discarded`, 'AbortError');

  const post = await bus.waterfall('tools/post-execute', { call, args, output }, (): PostExecuteDecision => ({ kind: 'accept' }));
  let final: ToolResultValue = output;
  if (post.kind === 'block') {
    final = {
      content: `Error: the result of ${call.name} was blocked: ${post.feedback}`,
      isError: true,
      error: { name: 'BlockedResultError', code: 'BLOCKED' },
      meta: { original: toJsonOutput(output) },
    };
  } else if (post.content !== undefined) {
    final = {
      ...output,
      content: post.content,
      meta: {
        ...(isJsonObject(output.meta) ? output.meta : output.meta === undefined ? {} : { tool: output.meta }),
        original: toJsonOutput(output),
      },
    };
  }

  const outcome: ToolCallOutcome = {
    content: blocksOf(final.content),
    isError: final.isError === true,
    deferred,
    concludesTurn: concludes,
  };
  if (final.error) outcome.error = final.error;
  if (final.meta !== undefined) outcome.meta = final.meta;
  bus.emit('tools/result', { call, outcome: deepFreeze({ ...outcome }) });
  return outcome;
}

/** An answer's parts; anything but the four outcomes (a handler's bad value) fails closed. */
function readAnswer(a: ApprovalAnswer): { outcome: ApprovalOutcome; reason?: string | undefined; rule?: string | undefined } {
  if (typeof a === 'string') return { outcome: OUTCOMES.has(a) ? a : 'unavailable' };
  if (typeof a !== 'object' || a === null) return { outcome: 'unavailable' };
  if (a.outcome === 'rejected')
    return { outcome: 'rejected', reason: typeof a.reason === 'string' && a.reason.trim() ? a.reason.trim() : undefined };
  if (a.outcome === 'allowed-once') return { outcome: 'allowed-once', rule: typeof a.rule === 'string' ? a.rule : undefined };
  return { outcome: 'unavailable' };
}
const OUTCOMES: ReadonlySet<string> = new Set<ApprovalOutcome>(['allowed-once', 'rejected', 'cancelled', 'unavailable']);

function parsesAsAllowRule(rule: string): boolean {
  try {
    parseRule(rule, 'allow');
    return true;
  } catch {
    return false;
  }
}

function isJsonObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toJsonOutput(o: ToolResultValue): JsonValue {
  const out: Record<string, JsonValue> = { content: blocksOf(o.content) as unknown as JsonValue };
  if (o.isError !== undefined) out.isError = o.isError;
  if (o.error) out.error = o.error;
  if (o.meta !== undefined) out.meta = o.meta;
  return out;
}

async function runBody(def: ToolDefinition, args: unknown, ctx: ToolRunContext): Promise<ToolResultValue> {
  const timeoutMs = def.timeoutMs;
  if (timeoutMs === undefined) return normalize(await def.execute(args, ctx));
  const ac = new AbortController();
  const onAbort = (): void => ac.abort(ctx.signal.reason);
  if (ctx.signal.aborted) ac.abort(ctx.signal.reason);
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new ToolError('TIMEOUT', `${def.name} timed out after ${timeoutMs} ms`);
      ac.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    return normalize(await Promise.race([Promise.resolve(def.execute(args, { ...ctx, signal: ac.signal })), timedOut]));
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}
