/**
 * Alerts: what in a session's statistics needs a person. The defaults are the ones the log as a
 * data plane is watched for: turns that ended `error`, `max-tokens` or `blocked`, turns left open
 * with no live writer (`dangling`), and tool calls that never got a result (`unanswered`).
 * `aborted` and `interrupted` (a turn crash repair closed when the session was resumed) can be
 * asked for too.
 */
import type { SessionStats } from './stats.js';

export const ALERT_KINDS = ['error', 'max-tokens', 'blocked', 'dangling', 'unanswered', 'aborted', 'interrupted'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export const DEFAULT_ALERTS: readonly AlertKind[] = ['error', 'max-tokens', 'blocked', 'dangling', 'unanswered'];

export interface Alert {
  kind: AlertKind;
  sessionId: string;
  turn?: number;
  /** The seq to look at: the turn's start, or the unanswered call. */
  seq: number;
  callId?: string;
  /** One line for a person (log text in it is not escaped; print it through the CLI's escaping). */
  message: string;
}

export function isAlertKind(s: string): s is AlertKind {
  return (ALERT_KINDS as readonly string[]).includes(s);
}

/** The alerts of one session, in log order. Needs the per-turn figures (`detail`, the default). */
export function alertsOf(stats: SessionStats, kinds: readonly AlertKind[] = DEFAULT_ALERTS): Alert[] {
  const want = new Set(kinds);
  const out: Alert[] = [];
  const id = stats.id;
  for (const t of stats.perTurn ?? []) {
    if (t.state === 'dangling' && want.has('dangling')) {
      out.push({
        kind: 'dangling',
        sessionId: id,
        turn: t.turn,
        seq: t.start,
        message: `turn ${t.turn} (seq ${t.start}) has no turn/end and no live writer holds the session`,
      });
    }
    if (
      t.state === 'ended' &&
      t.reason !== undefined &&
      want.has(t.reason as AlertKind) &&
      t.reason !== 'dangling' &&
      t.reason !== 'unanswered'
    ) {
      const detail = t.reasonDetail !== undefined ? ` ${t.reasonDetail}` : '';
      out.push({
        kind: t.reason as AlertKind,
        sessionId: id,
        turn: t.turn,
        seq: t.end ?? t.start,
        message: `turn ${t.turn} ended ${t.reason}${detail}`,
      });
    }
    if (want.has('unanswered')) {
      for (const c of t.unanswered)
        out.push({
          kind: 'unanswered',
          sessionId: id,
          turn: t.turn,
          seq: c.seq,
          callId: c.callId,
          message:
            `tool call ${c.name} [${c.callId}] (seq ${c.seq}, turn ${t.turn}${c.step !== undefined ? ` step ${c.step}` : ''}` +
            ') has no result',
        });
    }
  }
  // Calls outside any turn (logs of other formats may hold them).
  if (want.has('unanswered')) {
    for (const c of stats.unanswered) {
      if (c.turn === undefined)
        out.push({
          kind: 'unanswered',
          sessionId: id,
          seq: c.seq,
          callId: c.callId,
          message: `tool call ${c.name} [${c.callId}] (seq ${c.seq}) has no result`,
        });
    }
  }
  return out.sort((a, b) => a.seq - b.seq);
}
