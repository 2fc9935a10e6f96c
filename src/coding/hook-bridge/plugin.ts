/**
 * The hook bridge: a project's Claude Code and Codex command hooks, run at the matching seams of
 * the loop with the JSON those agents pass on stdin, their answers taking effect:
 *
 * | hook event         | seam                                   | effect |
 * |--------------------|----------------------------------------|--------|
 * | `SessionStart`     | the first `agent/pre-step` of this agent (matcher: `startup` / `resume`) | context |
 * | `UserPromptSubmit` | `agent/pre-step` of a turn's first step | block (the turn ends `blocked`), context |
 * | `PreToolUse`       | `tools/pre-execute` (outermost)        | deny, ask (a deny when the approval policy is `never`) |
 * | `PostToolUse`      | `tools/post-execute` (outermost)       | block (the model sees the reason instead of the output), context |
 * | `Stop`             | `agent/turn-stopping`                  | block = keep going: the reason steers one more step |
 *
 * Tool events are matched and described in each dialect's terms (`Bash`, `Edit`, Codex's
 * `apply_patch`…, with the peer's argument names: peer-tools.ts), so a team's guards see dsh's
 * calls, whichever tool set makes them.
 *
 * `continue: false` in any answer stops the turn (cancel with cause `{kind: 'hook'}`). Every
 * run is recorded as a `hook/invoked` / `hook/result` pair in the log (decision, exit code,
 * stderr summary, duration, typed failure); context and steering for the model go through the
 * inbox, so they are recorded `user/message`s (source `plugin`, `hooks-claude-code` or
 * `hooks-codex`) like any other input, never a side channel. A hook that fails, times out or
 * cannot start is a recorded, non-blocking failure: the work goes on.
 *
 * Hooks of one event run together, as in Claude Code and Codex (each under its own timeout); the
 * log has their `hook/invoked` records, then their `hook/result`s in the same order, and their
 * answers fold to the most restrictive (outcome.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Plugin } from '../../agent/context.js';
import type { UserMessage } from '../../model/message.js';
import type { JsonObject, JsonValue } from '../../model/json.js';

type MutableJson = Record<string, JsonValue>;
import type { HookConfig, HookDialect, HookPoint } from './config.js';
import { mergeOutcomes, readOutcome, type HookOutcome } from './outcome.js';
import { peerCall, type PeerCall } from './peer-tools.js';
import { runCommandHook, type HookRun } from './run.js';

export const HOOK_PLUGIN_NAME: Record<HookDialect, string> = { 'claude-code': 'hooks-claude-code', codex: 'hooks-codex' };

export interface HookBridgeOptions {
  configs: readonly HookConfig[];
  /** The workspace: the hooks' working directory and `cwd` in their payload. */
  cwd: string;
  /** `never`: nobody can approve, so a hook's "ask" is a deny (as the permission rules do). */
  approvalPolicy?: 'ask' | 'never';
  /** For a hook that sets no `timeout` (default 600 s). */
  defaultTimeoutMs?: number;
  /** Environment variables the hooks must not see (provider keys). */
  hideEnv?: readonly string[];
  /** The session log's path, as `transcript_path` (Claude Code: `''` when unknown; Codex: null). */
  transcriptPath?: () => string | undefined;
  /** How many times Stop hooks may keep one turn going (default 8); past it they are not run. */
  maxStopContinues?: number;
  /** Characters of a hook's stderr kept in its `hook/result` (default 500). */
  stderrSummaryChars?: number;
}

interface PointRun {
  merged: HookOutcome;
  /** Each hook's context, with the dialect that produced it (the message's source). */
  contexts: { dialect: HookDialect; text: string }[];
}

export function hookBridge(opts: HookBridgeOptions): Plugin {
  const configs = opts.configs.filter((c) => c.points.size > 0);
  return (host) => {
    if (configs.length === 0) return;
    const session = host.session;
    const agent = host.agent;
    const counters = new Map<string, number>();
    const disposed = new AbortController();
    const summaryChars = opts.stderrSummaryChars ?? 500;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of opts.hideEnv ?? []) delete env[k];

    const common = (dialect: HookDialect, point: HookPoint, turn: number): Record<string, unknown> => {
      const path = opts.transcriptPath?.();
      const base: Record<string, unknown> = {
        session_id: session.id,
        transcript_path: path ?? (dialect === 'codex' ? null : ''),
        cwd: opts.cwd,
        hook_event_name: point,
      };
      if (dialect === 'codex') {
        base.turn_id = String(turn);
        base.model = agent.options.model;
      }
      return base;
    };

    /**
     * Run every hook of every config at `point` whose matcher accepts one of `subjects` (per
     * dialect: a tool's peer names differ; undefined: matchers are not tested); undefined when none ran.
     */
    const runPoint = async (
      point: HookPoint,
      subjects: ((dialect: HookDialect) => readonly string[]) | undefined,
      turn: number,
      extra: (dialect: HookDialect) => Record<string, unknown>,
      signal: AbortSignal | undefined,
      callId?: string,
    ): Promise<PointRun | undefined> => {
      const outcomes: HookOutcome[] = [];
      const contexts: PointRun['contexts'] = [];
      const stop = signal ? AbortSignal.any([signal, disposed.signal]) : disposed.signal;
      // Every matching hook is started at once, as Claude Code and Codex do (each with its own
      // timeout): all `hook/invoked` records first, then each `hook/result` in the same order once
      // all have answered, so a slow hook delays the work by its own time, not the sum.
      const started: Promise<{ handlerId: string; run: HookRun; outcome: HookOutcome; dialect: HookDialect }>[] = [];
      for (const config of configs) {
        for (const group of config.points.get(point) ?? []) {
          if (subjects !== undefined && !subjects(config.dialect).some((s) => group.test(s))) continue;
          for (const hook of group.hooks) {
            const key = `${config.dialect}:${point}`;
            const n = (counters.get(key) ?? 0) + 1;
            counters.set(key, n);
            const handlerId = `${key}:${n}`;
            const invoked: MutableJson = { turn, point, dialect: config.dialect, handlerId, command: agent.redact(hook.command) };
            if (group.matcher !== undefined) invoked.matcher = group.matcher;
            if (callId !== undefined) invoked.callId = callId;
            session.append('hook/invoked', invoked);
            started.push(
              runCommandHook(hook.command, {
                cwd: opts.cwd,
                env: config.dialect === 'claude-code' ? { ...env, CLAUDE_PROJECT_DIR: opts.cwd } : env,
                payload: { ...common(config.dialect, point, turn), ...extra(config.dialect) },
                timeoutMs: hook.timeoutSec !== undefined ? hook.timeoutSec * 1000 : (opts.defaultTimeoutMs ?? 600_000),
                signal: stop,
              }).then((run) => ({ handlerId, run, outcome: readOutcome(point, run), dialect: config.dialect })),
            );
          }
        }
      }
      for (const { handlerId, run, outcome: o, dialect } of await Promise.all(started)) {
        session.append('hook/result', agent.redactRecord(resultRecord(turn, point, handlerId, run, o, summaryChars)));
        outcomes.push(o);
        for (const text of o.context) contexts.push({ dialect, text });
      }
      return outcomes.length ? { merged: mergeOutcomes(outcomes), contexts } : undefined;
    };

    const contextMessage = (dialect: HookDialect, point: HookPoint, text: string): UserMessage => ({
      id: randomUUID(),
      role: 'user',
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: HOOK_PLUGIN_NAME[dialect], hook: point },
    });
    const halt = (r: PointRun | undefined, point: HookPoint): boolean => {
      if (!r?.merged.halt) return false;
      agent.cancel({ kind: 'hook', reason: r.merged.halt.reason ?? `a ${point} hook answered "continue": false` }, { keepInbox: true });
      return true;
    };

    // SessionStart: its source is known when the agent starts; it runs inside the first turn, so
    // its record and its context sit in the log before the first request.
    let startSource: 'startup' | 'resume' | undefined;
    const offStart = host.on('agent/session-start', ({ source }) => {
      startSource = source;
    });

    const offPreStep = host.on(
      'agent/pre-step',
      async (p, next) => {
        const extra: UserMessage[] = [];
        if (startSource !== undefined) {
          const source = startSource;
          startSource = undefined;
          const r = await runPoint(
            'SessionStart',
            () => [source],
            p.turn,
            () => ({ source }),
            p.signal,
          );
          if (halt(r, 'SessionStart')) return { kind: 'reject' };
          for (const c of r?.contexts ?? []) extra.push(contextMessage(c.dialect, 'SessionStart', c.text));
        }
        const prompt = p.step === 1 ? promptText(p.messages) : undefined;
        if (prompt !== undefined) {
          const r = await runPoint('UserPromptSubmit', undefined, p.turn, () => ({ prompt }), p.signal);
          if (r && (r.merged.decision === 'block' || r.merged.halt)) return { kind: 'reject' };
          for (const c of r?.contexts ?? []) extra.push(contextMessage(c.dialect, 'UserPromptSubmit', c.text));
        }
        const decision = await next(p);
        if (decision.kind !== 'enter' || extra.length === 0) return decision;
        return { kind: 'enter', messages: [...decision.messages, ...extra] };
      },
      { name: 'hook-bridge' },
    );

    const offPre = host.on(
      'tools/pre-execute',
      async (p, next) => {
        const input = toolInput(p.args, p.call.rawArguments);
        const peer = peerCalls(p.call.name, input);
        const r = await runPoint(
          'PreToolUse',
          (d) => peer(d).subjects,
          p.call.turn,
          (d) => ({ ...toolFields(peer(d), p.call.name, input), tool_use_id: p.call.callId }),
          p.ctx.signal,
          p.call.callId,
        );
        if (halt(r, 'PreToolUse')) return { kind: 'deny', reason: r!.merged.halt!.reason ?? 'a PreToolUse hook stopped the turn' };
        // The permission rules still apply; the most restrictive answer wins.
        const inner = await next();
        if (!r) return inner;
        const m = r.merged;
        if (m.decision === 'deny') return { kind: 'deny', reason: m.reason ?? 'a PreToolUse hook blocked it' };
        if (inner.kind === 'deny') return inner;
        if (m.decision !== 'ask') return inner;
        const why = m.reason ?? 'a PreToolUse hook asks for approval';
        if (opts.approvalPolicy === 'never')
          return { kind: 'deny', reason: `${why} (a PreToolUse hook asked for approval, and the approval policy is "never")` };
        return { kind: 'ask', reason: why };
      },
      { name: 'hook-bridge', prepend: true },
    );

    const offPost = host.on(
      'tools/post-execute',
      async (p, next) => {
        const inner = await next();
        const input = toolInput(p.args, p.call.rawArguments);
        const peer = peerCalls(p.call.name, input);
        const r = await runPoint(
          'PostToolUse',
          (d) => peer(d).subjects,
          p.call.turn,
          (d) => ({
            ...toolFields(peer(d), p.call.name, input),
            tool_response: resultText(p.output.content),
            tool_use_id: p.call.callId,
          }),
          undefined,
          p.call.callId,
        );
        if (!r) return inner;
        for (const c of r.contexts) agent.inject(contextMessage(c.dialect, 'PostToolUse', c.text));
        halt(r, 'PostToolUse');
        if (r.merged.decision === 'block') return { kind: 'block', feedback: r.merged.reason ?? 'a PostToolUse hook blocked the result' };
        return inner;
      },
      { name: 'hook-bridge', prepend: true },
    );

    const continues = new Map<number, number>();
    const max = opts.maxStopContinues ?? 8;
    const offStop = host.on('agent/turn-stopping', async ({ turn, signal }) => {
      const done = continues.get(turn) ?? 0;
      if (done >= max) {
        session.append('hook/result', {
          turn,
          point: 'Stop',
          handlerId: 'stop-limit',
          decision: 'error',
          error: { code: 'HOOK_STOP_LIMIT', message: `Stop hooks kept this turn going ${done} times; they are not run again in it` },
        });
        return;
      }
      const last = session.lastOfType('assistant/message', (e) => e.data.turn === turn);
      const lastText = last ? last.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('') : undefined;
      const r = await runPoint(
        'Stop',
        undefined,
        turn,
        (d) => ({ stop_hook_active: done > 0, ...(d === 'codex' ? { last_assistant_message: lastText ?? null } : {}) }),
        signal,
      );
      if (!r || r.merged.halt || r.merged.decision !== 'block') return;
      continues.set(turn, done + 1);
      const dialect = configs.find((c) => c.points.has('Stop'))!.dialect;
      agent.steer(contextMessage(dialect, 'Stop', r.merged.reason ?? 'continue: a Stop hook asked to keep going'));
    });

    return () => {
      disposed.abort();
      for (const off of [offStart, offPreStep, offPre, offPost, offStop]) off();
    };
  };
}

function resultRecord(turn: number, point: HookPoint, handlerId: string, r: HookRun, o: HookOutcome, max: number): JsonObject {
  const out: MutableJson = { turn, point, handlerId, decision: o.decision };
  if (r.exitCode !== undefined) out.exitCode = r.exitCode;
  const err = r.stderr.trim();
  if (err) out.stderrSummary = err.length > max ? `${err.slice(0, max)}…` : err;
  out.durationMs = Math.round(r.durationMs * 1000) / 1000;
  if (o.reason !== undefined) out.reason = o.reason;
  if (o.context.length) out.additionalContext = [...o.context];
  if (o.halt) out.continue = false;
  if (o.halt?.reason !== undefined) out.stopReason = o.halt.reason;
  if (o.systemMessage !== undefined) out.systemMessage = o.systemMessage;
  if (o.failure) out.error = { code: o.failure.code, message: o.failure.message };
  return out;
}

/** The text of the prompt a turn starts with (its user-typed messages), or undefined. */
function promptText(messages: readonly UserMessage[]): string | undefined {
  const typed = messages.filter((m) => m.source.kind === 'user');
  if (typed.length === 0) return undefined;
  return typed.map((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')).join('\n\n');
}

/** The call in each dialect's terms, worked out once per dialect. */
function peerCalls(name: string, input: unknown): (dialect: HookDialect) => PeerCall {
  const memo = new Map<HookDialect, PeerCall>();
  return (d) => {
    let c = memo.get(d);
    if (!c) memo.set(d, (c = peerCall(d, name, input)));
    return c;
  };
}

/** The peer's `tool_name` and `tool_input`, and dsh's own beside them for scripts written for dsh. */
function toolFields(peer: PeerCall, name: string, input: unknown): Record<string, unknown> {
  return { tool_name: peer.toolName, tool_input: peer.toolInput, dsh_tool_name: name, dsh_tool_input: input };
}

function toolInput(args: unknown, raw: string): unknown {
  if (typeof args === 'object' && args !== null) return args;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((b: { type?: string; text?: string }) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []))
    .join('');
}
