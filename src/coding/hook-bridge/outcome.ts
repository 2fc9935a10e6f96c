/**
 * What a command hook answered, read the way Claude Code and Codex read it (facts from their
 * hook references), into one neutral outcome:
 *
 * - exit 2: blocking; stderr is the reason (a denied tool, a blocked result, a blocked prompt, or
 *   for Stop the reason to keep going);
 * - any other non-zero exit, a timeout, a hook that could not start: a non-blocking failure with
 *   a typed code; the work goes on, the failure is recorded;
 * - exit 0 with a JSON object on stdout: `continue: false` (+ `stopReason`) halts; `decision:
 *   "block"` + `reason`; for PreToolUse `hookSpecificOutput.permissionDecision` allow | deny |
 *   ask (+ `permissionDecisionReason`, over the older top-level `decision: approve | block`);
 *   `hookSpecificOutput.additionalContext` adds context (its `hookEventName`, when given, must
 *   name this event, or the hook-specific fields are ignored); `systemMessage` is for the user;
 * - exit 0 with other output: for UserPromptSubmit and SessionStart, plain stdout is context;
 *   elsewhere it is ignored.
 */
import type { HookPoint } from './config.js';
import type { HookRun } from './run.js';

export type HookVerdict = 'pass' | 'allow' | 'ask' | 'deny' | 'block' | 'error';

export type HookFailureCode = 'HOOK_TIMEOUT' | 'HOOK_SPAWN_FAILED' | 'HOOK_CANCELLED' | 'HOOK_FAILED';

export interface HookOutcome {
  decision: HookVerdict;
  /** Why it blocked, denied or asked (given to the model or the approver). */
  reason?: string;
  /** Context for the model (each becomes a recorded user message). */
  context: string[];
  /** `continue: false`: stop the turn. */
  halt?: { reason?: string };
  /** Text for the user, not the model. */
  systemMessage?: string;
  failure?: { code: HookFailureCode; message: string };
}

const PLAIN_CONTEXT: ReadonlySet<HookPoint> = new Set(['UserPromptSubmit', 'SessionStart']);

export function readOutcome(point: HookPoint, run: HookRun): HookOutcome {
  if (run.failure) return { decision: 'error', context: [], failure: run.failure };
  if (run.exitCode === 2) {
    const reason = run.stderr.trim();
    return { decision: point === 'PreToolUse' ? 'deny' : 'block', ...(reason ? { reason } : {}), context: [] };
  }
  if (run.exitCode !== 0) {
    const why = run.stderr.trim();
    return {
      decision: 'error',
      context: [],
      failure: { code: 'HOOK_FAILED', message: `the hook exited with status ${run.exitCode}${why ? `: ${why}` : ''}` },
    };
  }
  const json = parseObject(run.stdout);
  if (!json) {
    const text = run.stdout.trim();
    return { decision: 'pass', context: text && PLAIN_CONTEXT.has(point) ? [text] : [] };
  }
  const out: HookOutcome = { decision: 'pass', context: [] };
  if (json.continue === false) out.halt = typeof json.stopReason === 'string' ? { reason: json.stopReason } : {};
  if (typeof json.systemMessage === 'string') out.systemMessage = json.systemMessage;
  const reason = typeof json.reason === 'string' && json.reason.trim() ? json.reason : undefined;
  if (point === 'PreToolUse') {
    if (json.decision === 'block') setDecision(out, 'deny', reason);
    else if (json.decision === 'approve') setDecision(out, 'allow', reason);
  } else if (json.decision === 'block') setDecision(out, 'block', reason);
  const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : undefined;
  if (specific && (specific.hookEventName === undefined || specific.hookEventName === point)) {
    if (point === 'PreToolUse') {
      const d = specific.permissionDecision;
      const why = typeof specific.permissionDecisionReason === 'string' ? specific.permissionDecisionReason : undefined;
      if (d === 'deny' || d === 'ask' || d === 'allow') setDecision(out, d, why);
    }
    if (typeof specific.additionalContext === 'string' && specific.additionalContext.trim()) out.context.push(specific.additionalContext);
  }
  return out;
}

function setDecision(out: HookOutcome, d: HookVerdict, reason: string | undefined): void {
  out.decision = d;
  if (reason !== undefined) out.reason = reason;
  else delete out.reason;
}

const RANK: Record<HookVerdict, number> = { error: 0, pass: 0, allow: 1, ask: 2, block: 3, deny: 3 };

/**
 * Every hook that matched one point, folded: the most restrictive decision wins (deny or block
 * over ask over allow), reasons of the winning kind joined, contexts kept in order, a halt kept.
 */
export function mergeOutcomes(outcomes: readonly HookOutcome[]): HookOutcome {
  const out: HookOutcome = { decision: 'pass', context: [] };
  let top = 0;
  for (const o of outcomes) top = Math.max(top, RANK[o.decision]);
  const reasons: string[] = [];
  for (const o of outcomes) {
    out.context.push(...o.context);
    if (o.halt && !out.halt) out.halt = o.halt;
    if (top > 0 && RANK[o.decision] === top) {
      if (out.decision === 'pass') out.decision = o.decision;
      if (o.reason) reasons.push(o.reason);
    }
  }
  if (reasons.length) out.reason = reasons.join('\n\n');
  return out;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
