/**
 * `replaySession`: re-run a recorded session through a fresh agent, with no model, and compare
 * the new log with the recording.
 *
 * The harness sits above the agent and only uses its public seams:
 * - model streams come from the replay adapter, attempt by attempt;
 * - each turn is woken with the input that woke it in the recording (its inbox claims);
 * - an `agent/pre-step` listener makes each step enter exactly what the recorded step entered
 *   (the prompt, runtime-context snapshots, injected context, steering);
 * - an `agent/turn-stopping` listener steers when the recording took another step after a step
 *   that would have ended the turn (a stop hook, `/loop`);
 * - a `tools/execute` wrapper ends the turn after the tools where the recording did
 *   (`concludeTurn`), and cancels with the recorded cause while a call the recording shows as
 *   `ABORTED` runs; a cancel mid-stream happens when the replayed stream reaches the recorded end
 *   of the cut-off attempt;
 * - tools answer from the recorded results by default (LLM-free and side-effect-free), or run live.
 *
 * What the loop does with all that is its own: the comparison shows whether it did what the
 * recorded loop did.
 */
import { assembleAgent, type Agent, type AssembleAgentOptions } from '../agent/agent.js';
import type { Plugin } from '../agent/context.js';
import { DEFAULT_RETRYABLE_CODES, type RetryPolicyOptions } from '../agent/retry.js';
import type { ApprovalHandler } from '../tools/pipeline.js';
import type { ToolDefinition } from '../tools/types.js';
import type { LlmCallConfig } from '../model/request.js';
import type { EpochHeader } from '../session/events.js';
import type { Session } from '../session/session.js';
import {
  ReplayAdapter,
  recordedEvents,
  type PlaceholderMatch,
  type ReplayMode,
  type ReplaySource,
  type RequestDivergence,
} from '../llm/replay-adapter.js';
import { indexRecording, type RecordedLog, type RecordedStep, type RecordedTurn } from '../session/recording.js';
import { assessReplay, recordedCancelCause, replayLimit, turnWake } from './plan.js';
import { replayCompactions } from '../compaction/replay-compactions.js';
import { recordedCall, replayTools } from './tools.js';
import { compareLogs, type LogComparison } from './compare.js';
import { isPlaceholder } from '../session/json-diff.js';

export interface ReplaySessionOptions {
  /** `recorded` (default): answer each call from the recording. Or real tools to run live. */
  tools?: 'recorded' | ToolDefinition[];
  /** The adapter's handling of a request that differs from the recorded one (default `report`). */
  mode?: ReplayMode;
  /** Workspace for live tools; defaults to the process cwd. */
  cwd?: string;
  /** System prompt when the recording's is a `{{system}}` placeholder. */
  system?: string;
  /**
   * Retry policy options. By default: no waiting, and the recording's own `maxRetries` and retried
   * failure codes, so the loop's retry decisions can match the recorded ones. `false`: no retries.
   */
  retry?: RetryPolicyOptions | false;
  plugins?: Plugin[];
  /** Re-enact the recording's compaction brackets where they happened (default true). */
  compactions?: boolean;
  /** "Model-visible means recorded" check before every model call (default on). */
  invariants?: boolean;
  maxParallelToolCalls?: number;
  approve?: ApprovalHandler;
}

export interface ReplayResult {
  /** The new session the replay wrote. */
  session: Session;
  agent: Agent;
  recording: RecordedLog;
  comparison: LogComparison;
  /** Where a live request differed from the recorded one. */
  divergences: RequestDivergence[];
  placeholders: PlaceholderMatch[];
  /** Why this recording cannot replay faithfully with this harness (empty when it can). */
  unsupported: string[];
  /** Things the harness had to make up or could not do, for the reader of the report. */
  notes: string[];
  /**
   * Set when the replay stopped before a recorded turn it cannot re-enact (`unsupported` says
   * why): that turn and the rest of the recording were not run, and the comparison covers only
   * the turns before it.
   */
  stoppedBefore?: { turn: number; seq: number };
}

export async function replaySession(source: Exclude<ReplaySource, RecordedLog>, opts: ReplaySessionOptions = {}): Promise<ReplayResult> {
  const log = indexRecording(recordedEvents(source));
  const notes: string[] = [];
  const map = new TurnMap();
  // Assigned right below; the callbacks that read it only run once the agent runs.
  let agent!: Agent;

  const livePosition = (): { turn: number; step: number } | undefined => {
    const t = agent.session.trace;
    return t.openTurn === undefined || t.openStep === undefined ? undefined : { turn: t.openTurn, step: t.openStep };
  };
  const locate = (live: { turn: number; step: number }): RecordedStep | undefined => {
    const rt = map.recorded(live.turn);
    return rt === undefined ? undefined : log.step(rt, live.step);
  };
  const adapter = new ReplayAdapter(log, {
    mode: opts.mode ?? 'report',
    providers: log.providers.length > 0 ? log.providers : ['replay'],
    position: () => {
      const p = livePosition();
      // A live turn the recording has no counterpart for gets turn 0: no attempt, a clear error.
      return p && { turn: map.recorded(p.turn) ?? 0, step: p.step };
    },
    onHang: (a) => {
      const cause = recordedCancelCause(log.turn(a.turn));
      if (!cause)
        notes.push(
          `turn ${a.turn} step ${a.step} attempt ${a.attempt} has no finish and the turn was not cancelled; cancelled it as a user cancel`,
        );
      agent.cancel(cause ?? { kind: 'user' });
    },
  });

  const first = log.headers[0]?.header;
  const create: AssembleAgentOptions = {
    model: first ? configOf(first) : { provider: 'replay', model: 'replay' },
    adapters: adapter,
    cwd: opts.cwd ?? process.cwd(),
    tools: opts.tools === undefined || opts.tools === 'recorded' ? replayTools(log, locate, livePosition) : opts.tools,
    retry: retryOptions(log, opts.retry),
    // Recorded compactions are re-enacted where they happened (same span, same summary), so a
    // compacted session replays with the history its later requests were built from.
    plugins: [
      ...(opts.plugins ?? []),
      ...(opts.compactions === false ? [] : [replayCompactions(log.events, notes)]),
      harnessPlugin(log, map, locate, adapter, () => agent, notes),
    ],
    invariants: opts.invariants ?? true,
  };
  const system = typeof first?.system === 'string' && !isPlaceholder(first.system) ? first.system : opts.system;
  if (system !== undefined) create.system = system;
  if (opts.maxParallelToolCalls !== undefined) create.maxParallelToolCalls = opts.maxParallelToolCalls;
  if (opts.approve) create.approve = opts.approve;
  agent = assembleAgent(create);

  const limit = replayLimit(log);
  if (limit !== undefined) {
    const rest = log.turns.filter((t) => t.turn >= limit.turn).length;
    notes.push(
      `replay stopped before turn ${limit.turn} (seq ${limit.startSeq}): ` +
        `${rest === 1 ? 'that turn was' : `that turn and the ${rest - 1} after it were`} not run, and the comparison covers the ` +
        'turns before it',
    );
  }
  for (const rt of log.turns) {
    if (limit !== undefined && rt.turn === limit.turn) break;
    map.drive(rt.turn);
    const w = turnWake(rt);
    if (w.synthetic) notes.push(`turn ${rt.turn}: the recording claimed no input at its start; woke it with ${w.wake.message.id}`);
    for (const m of w.inject) agent.inject(m);
    if (w.wake.kind === 'followup') agent.followup(w.wake.message);
    else agent.steer(w.wake.message);
    await agent.whenIdle();
  }

  const result: ReplayResult = {
    session: agent.session,
    agent,
    recording: log,
    // Against the part of the recording that was replayed.
    comparison: compareLogs(limit === undefined ? log.events : log.events.slice(0, limit.startSeq), agent.session.events),
    divergences: adapter.divergences,
    placeholders: adapter.placeholders,
    unsupported: assessReplay(log),
    notes,
  };
  if (limit !== undefined) result.stoppedBefore = { turn: limit.turn, seq: limit.startSeq };
  return result;
}

/** Live turn numbers to recorded ones: the first live turn opened while driving a recorded turn is it. */
class TurnMap {
  private readonly liveToRecorded = new Map<number, number>();
  private driving: number | undefined;

  drive(recordedTurn: number): void {
    this.driving = recordedTurn;
  }
  opened(liveTurn: number): void {
    if (this.driving === undefined) return;
    this.liveToRecorded.set(liveTurn, this.driving);
    this.driving = undefined; // any further live turn is unplanned
  }
  recorded(liveTurn: number): number | undefined {
    return this.liveToRecorded.get(liveTurn);
  }
}

function harnessPlugin(
  log: RecordedLog,
  map: TurnMap,
  locate: (live: { turn: number; step: number }) => RecordedStep | undefined,
  adapter: ReplayAdapter,
  agent: () => Agent,
  notes: string[],
): Plugin {
  const turnOf = (liveTurn: number): RecordedTurn | undefined => {
    const rt = map.recorded(liveTurn);
    return rt === undefined ? undefined : log.turn(rt);
  };
  return (host) => {
    const unsubscribe = host.session.subscribe((e) => {
      if (e.type === 'turn/start') map.opened(e.data.turn);
    });

    host.on(
      'agent/pre-step',
      (p) => {
        const rt = turnOf(p.turn);
        const step = rt?.steps.find((s) => s.step === p.step);
        if (step) return { kind: 'enter', messages: [...step.entered] };
        if (rt && p.step === 1 && rt.reason?.kind === 'blocked') return { kind: 'reject' };
        // No such recorded step: enter nothing, so the loop ends the turn if it was going to.
        return { kind: 'enter', messages: [] };
      },
      { name: 'dsh:replay/pre-step' },
    );

    host.on(
      'agent/turn-stopping',
      (p) => {
        const rt = turnOf(p.turn);
        const next = rt?.steps.find((s) => s.step === host.session.trace.lastStep + 1);
        if (!rt || !next) return;
        const m = next.entered[0];
        if (!m) {
          notes.push(
            `turn ${rt.turn} step ${next.step} entered nothing after a step that ended the turn; the loop cannot be made to take it`,
          );
          return;
        }
        p.agent.steer(m);
      },
      { name: 'dsh:replay/turn-stopping' },
    );

    host.on(
      'agent/request',
      (_p, next) => {
        // Follows recorded header changes (a model switch mid-session); the first request's
        // configuration is the agent's own, seeded from the first recorded header.
        const { attempt } = adapter.peek();
        const h = attempt ? log.headerBefore(attempt.firstSeq) : undefined;
        return h ? configOf(h.header) : next();
      },
      { name: 'dsh:replay/request' },
    );

    host.on(
      'tools/execute',
      (p, next) => {
        const rt = turnOf(p.ctx.turn);
        const step = locate({ turn: p.ctx.turn, step: p.ctx.step });
        if (rt && step && rt.steps[rt.steps.length - 1] === step && (rt.reason?.kind === 'completed' || rt.reason?.kind === 'max-tokens')) {
          p.ctx.concludeTurn(); // the recording took no step after these tools
        }
        if (recordedCall(step, p.call.callId)?.result?.data.error?.code === 'ABORTED') {
          const cause = recordedCancelCause(rt);
          if (cause) agent().cancel(cause);
        }
        return next();
      },
      { name: 'dsh:replay/tools' },
    );

    return unsubscribe;
  };
}

/** The recorded configuration without what the recorded adapter filled in (the replay adapter fills it again). */
function configOf(h: EpochHeader): LlmCallConfig {
  const cfg = { ...h.config } as LlmCallConfig & Record<string, unknown>;
  for (const [k, v] of Object.entries(h.adapterDefaults ?? {})) if (v) delete cfg[k];
  return cfg;
}

function retryOptions(log: RecordedLog, given: RetryPolicyOptions | false | undefined): RetryPolicyOptions | false {
  if (given === false) return false;
  const retries = log.turns.flatMap((t) => t.steps.flatMap((s) => s.retries));
  const max = retries.reduce<number | undefined>((m, r) => (r.maxRetries === undefined ? m : Math.max(m ?? 0, r.maxRetries)), undefined);
  const codes = [...new Set([...DEFAULT_RETRYABLE_CODES, ...retries.map((r) => r.failure.code)])];
  const out: RetryPolicyOptions = { retryableCodes: codes, sleep: async () => undefined, random: () => 0.5, ...given };
  if (max !== undefined && given?.maxRetries === undefined) out.maxRetries = max;
  return out;
}
