/**
 * Event builders for store tests, written against the session API only. A "turn" here is what
 * the agent loop writes for one prompt: a streamed answer with a tool call, the call and its
 * result, and a second step with a streamed final answer.
 */
import { createHash } from 'node:crypto';
import type { Session } from '../../../src/session/index.js';

export const T0 = 1_755_000_000_000;

export function fixedClock(start = T0): () => number {
  let t = start - 1;
  return () => ++t;
}

/** mulberry32: deterministic text for generated workloads. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'the a of to file function test error value return session event log turn step model tool call result message chunk stream'.split(' ');

export interface TurnShape {
  /** Text deltas per answer. */
  deltas?: number;
  /** Bytes of tool output. */
  resultBytes?: number;
  rnd?: () => number;
  /** Stop after this many events of the turn (a turn left open, as a crash would). */
  stopAfter?: number;
}

/** Append one turn; returns the seqs appended. Deterministic for a given `rnd`. */
export function appendTurn(s: Session, shape: TurnShape = {}): number[] {
  const rnd = shape.rnd ?? prng(s.length + 1);
  const word = (): string => ` ${WORDS[Math.floor(rnd() * WORDS.length)]!}`;
  const deltas = shape.deltas ?? 5;
  const turn = s.trace.lastTurn + 1;
  const seqs: number[] = [];
  let left = shape.stopAfter ?? Infinity;
  const add = (fn: () => number): boolean => {
    if (left <= 0) return false;
    left--;
    seqs.push(fn());
    return true;
  };
  const callId = `call-${turn}`;
  if (!add(() => s.append('turn/start', { turn }).seq)) return seqs;
  if (!add(() => s.append('step/start', { turn, step: 1 }).seq)) return seqs;
  if (
    !add(
      () =>
        s.append(
          'user/message',
          { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } },
          { surfaceOp: 'append' },
        ).seq,
    )
  )
    return seqs;
  const chunks1: number[] = [];
  let text1 = '';
  for (let i = 0; i < deltas; i++) {
    const t = word();
    text1 += t;
    if (
      !add(() => {
        const q = s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: t } }).seq;
        chunks1.push(q);
        return q;
      })
    )
      return seqs;
  }
  const args = JSON.stringify({ command: `ls ${turn}` });
  if (
    !add(
      () =>
        s.append(
          'assistant/message',
          {
            turn,
            step: 1,
            message: {
              id: `a${turn}.1`,
              role: 'assistant',
              content: [
                { type: 'text', text: text1 },
                { type: 'tool-call', id: callId, name: 'bash', arguments: args },
              ],
              source: { kind: 'model', provider: 'scripted', model: 'demo' },
            },
            usage: { inputTokens: 10, outputTokens: deltas },
          },
          { surfaceOp: 'append', sourceEventSeqs: chunks1 },
        ).seq,
    )
  )
    return seqs;
  let callSeq = -1;
  if (!add(() => (callSeq = s.append('tool/call', { turn, step: 1, callId, name: 'bash', arguments: args }).seq))) return seqs;
  let out = '';
  const bytes = shape.resultBytes ?? 64;
  while (out.length < bytes) out += word();
  if (
    !add(
      () =>
        s.append(
          'tool/result',
          {
            turn,
            step: 1,
            message: {
              id: `r${turn}`,
              role: 'user',
              content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: out }] }],
              source: { kind: 'tool', callId },
            },
          },
          { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
        ).seq,
    )
  )
    return seqs;
  if (!add(() => s.append('step/end', { turn, step: 1 }).seq)) return seqs;
  if (!add(() => s.append('step/start', { turn, step: 2 }).seq)) return seqs;
  const chunks2: number[] = [];
  let text2 = '';
  for (let i = 0; i < deltas; i++) {
    const t = word();
    text2 += t;
    if (
      !add(() => {
        const q = s.append('assistant/chunk', { turn, step: 2, chunk: { type: 'text-delta', index: 0, text: t } }).seq;
        chunks2.push(q);
        return q;
      })
    )
      return seqs;
  }
  if (
    !add(
      () =>
        s.append(
          'assistant/message',
          {
            turn,
            step: 2,
            message: {
              id: `a${turn}.2`,
              role: 'assistant',
              content: [{ type: 'text', text: text2 }],
              source: { kind: 'model', provider: 'scripted', model: 'demo' },
            },
            usage: { inputTokens: 20, outputTokens: deltas },
          },
          { surfaceOp: 'append', sourceEventSeqs: chunks2 },
        ).seq,
    )
  )
    return seqs;
  if (!add(() => s.append('step/end', { turn, step: 2 }).seq)) return seqs;
  add(() => s.append('turn/end', { turn, reason: { kind: 'completed' } }).seq);
  return seqs;
}

/** The file's lines, parsed independently of the codec (header first). */
export function fileRecords(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Seqs a file holds, rows expanded by their own fields (independent of the codec's decoder). */
export function fileSeqs(text: string): number[] {
  const out: number[] = [];
  for (const r of fileRecords(text).slice(1)) {
    if (typeof r.seq === 'number') out.push(r.seq);
    else if (typeof r.seq0 === 'number') {
      const d = r.data as { texts?: unknown[]; args?: unknown[] };
      const n = (d.texts ?? d.args ?? []).length;
      for (let k = 0; k < n; k++) out.push(r.seq0 + k);
    }
  }
  return out;
}

/** A short digest of an event's type and data (what crash tests compare across processes). */
export function eventHash(e: { type: string; data: unknown }): string {
  return createHash('sha1')
    .update(JSON.stringify({ type: e.type, data: e.data }))
    .digest('hex')
    .slice(0, 16);
}
