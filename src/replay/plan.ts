/**
 * What the harness must do to re-run a recording, read from the recording alone: which input
 * wakes each turn, which cancel cause ends an aborted one, and what the harness cannot reproduce.
 */
import { randomUUID } from 'node:crypto';
import type { UserMessage } from '../model/message.js';
import type { AgentCancelCause } from '../session/events.js';
import type { RecordedLog, RecordedTurn } from '../session/recording.js';
import { stringifyJson } from '../session/json.js';

export interface TurnWake {
  /** Context for the first step, queued without waking (`inject`). */
  inject: UserMessage[];
  /** The waking input: a prompt (`followup`) or a steer. */
  wake: { kind: 'followup' | 'steer'; message: UserMessage };
  /** The recording claimed nothing at this turn's start, so the wake is made up. */
  synthetic: boolean;
}

/**
 * The input that opened the turn, as the recording's inbox claims show it: the `next-turn` prompt
 * (plus any `next-step` context claimed with it), or a steer when only `next-step` input was
 * claimed. The pre-step listener decides what each step enters; this only has to wake the turn
 * with what woke it.
 */
export function turnWake(turn: RecordedTurn): TurnWake {
  const first = turn.claims.filter((c) => c.step === 1);
  const prompts = first.filter((c) => c.target === 'next-turn').flatMap((c) => c.messages);
  const context = first.filter((c) => c.target === 'next-step').flatMap((c) => c.messages);
  if (prompts.length > 0) return { inject: context, wake: { kind: 'followup', message: prompts[0]! }, synthetic: false };
  if (context.length > 0)
    return { inject: context.slice(0, -1), wake: { kind: 'steer', message: context[context.length - 1]! }, synthetic: false };
  const entered = turn.steps[0]?.entered[0];
  const message: UserMessage = entered ?? {
    id: randomUUID(),
    role: 'user',
    content: [{ type: 'text', text: `(replay: turn ${turn.turn} claimed no input)` }],
    source: { kind: 'plugin', plugin: 'dsh:replay' },
  };
  return { inject: [], wake: { kind: 'steer', message }, synthetic: true };
}

/** The cause to cancel with where the recording shows an aborted turn. */
export function recordedCancelCause(turn: RecordedTurn | undefined): AgentCancelCause | undefined {
  const r = turn?.reason;
  if (r?.kind !== 'aborted') return undefined;
  // An imported legacy log recorded no cause; a user cancel is what those were.
  return r.reason.kind === 'legacy' ? { kind: 'user' } : r.reason;
}

/**
 * Why a faithful replay of this recording is not possible with this harness (empty when it is).
 * The harness still runs such a log; the comparison then shows where it parts.
 */
export function assessReplay(log: RecordedLog): string[] {
  const out: string[] = [];
  if (log.seedEnd !== undefined)
    out.push(`the log continues a seeded session (seed ends at seq ${log.seedEnd}); the harness replays from an empty session`);
  // A compaction checkpoint (the replace right after its compaction/summary) is re-enacted by
  // replayCompactions, which replaySession installs; any other surface rewrite is not.
  const isCheckpoint = (seq: number): boolean => log.events[seq - 1]?.type === 'compaction/summary';
  const rewrites = log.replacements.filter((seq) => !isCheckpoint(seq));
  if (rewrites.length > 0)
    out.push(`surface replace events outside a compaction bracket (e.g. pruning) at seq ${rewrites.join(', ')} are not reproduced`);
  if (log.outsideInputs.length > 0) out.push(`user messages outside any step at seq ${log.outsideInputs.join(', ')} are not reproduced`);
  const tools = log.headers.filter((h) => Array.isArray(h.header.tools)).map((h) => stringifyJson(h.header.tools));
  if (new Set(tools).size > 1) out.push('the recorded tool set changes mid-session; replay tools are registered once');
  for (const t of log.turns) {
    if (t.reason === undefined) out.push(`turn ${t.turn} never ended`);
    if (t.reason?.kind === 'interrupted')
      out.push(`turn ${t.turn} was closed by crash repair (the process writing it died mid-turn), which no replay can reproduce`);
    for (const s of t.steps) {
      const late = s.lateInputs.filter((seq) => !isCheckpoint(seq));
      if (late.length > 0)
        out.push(`turn ${t.turn} step ${s.step}: user messages written mid-step (seq ${late.join(', ')}) are not reproduced`);
      for (const a of s.attempts) {
        if (!a.finish && t.reason?.kind !== 'aborted')
          out.push(`turn ${t.turn} step ${s.step} attempt ${a.attempt} has no finish but the turn was not cancelled`);
      }
    }
    if (t.reason?.kind === 'aborted' && !cancelPointKnown(t)) {
      out.push(`turn ${t.turn} was cancelled at a point the harness cannot reach (neither mid-stream nor during a tool call)`);
    }
  }
  return out;
}

/**
 * The first recorded turn the harness cannot re-enact at all, and why: one that crash repair
 * closed (the writing process died mid-turn: no run of the loop ends that way), or one cancelled
 * at a point the harness cannot reach (a retry wait, say). Replay stops before it, so what is
 * compared is what can be reproduced; the turn and everything after it are reported, not run.
 */
export function replayLimit(log: RecordedLog): { turn: number; startSeq: number; why: string } | undefined {
  for (const t of log.turns) {
    if (t.reason?.kind === 'interrupted') {
      return {
        turn: t.turn,
        startSeq: t.startSeq,
        why: `turn ${t.turn} was closed by crash repair (the process writing it died mid-turn), which no replay can reproduce`,
      };
    }
    if (t.reason?.kind === 'aborted' && !cancelPointKnown(t)) {
      return {
        turn: t.turn,
        startSeq: t.startSeq,
        why: `turn ${t.turn} was cancelled at a point the harness cannot reach (neither mid-stream nor during a tool call)`,
      };
    }
  }
  return undefined;
}

/** A recorded cancel the harness can re-enact: mid-stream, or while a tool body ran (`ABORTED`). */
function cancelPointKnown(t: RecordedTurn): boolean {
  const last = t.steps[t.steps.length - 1];
  if (!last) return false;
  if (last.attempts.some((a) => !a.finish)) return true;
  return last.toolCalls.some((c) => c.result?.data.error?.code === 'ABORTED');
}
