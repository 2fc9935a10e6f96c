/**
 * A deliberately small, independent reader of dsh v0 JSONL for test expectations: it parses
 * lines and expands packed chunk rows without the session library, so expected values are not
 * produced by the code under test.
 */
export interface RawEvent {
  type: string;
  seq: number;
  time: number;
  data: any; // arbitrary JSON, read by shape in the assertions
  surfaceOp?: 'append' | { op: 'replace'; start: number; end: number };
  sourceEventSeqs?: number[];
}

const ROW_DELTA: Record<string, string> = {
  'text-chunks': 'text-delta',
  'reasoning-chunks': 'reasoning-delta',
  'tool-call-chunks': 'tool-call-delta',
};

export function parseRaw(text: string): { header: Record<string, unknown>; events: RawEvent[] } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = JSON.parse(lines[0]!) as Record<string, unknown>;
  const events: RawEvent[] = [];
  for (const line of lines.slice(1)) {
    const o = JSON.parse(line) as Record<string, any>;
    const delta = ROW_DELTA[o.type as string];
    if (delta === undefined) {
      events.push(o as RawEvent);
      continue;
    }
    const d = o.data;
    const members: string[] = delta === 'tool-call-delta' ? d.args : d.texts;
    let time = o.time0 as number;
    members.forEach((m, k) => {
      if (k > 0) time += d.dt[k - 1];
      const chunk =
        delta === 'tool-call-delta'
          ? { type: delta, index: d.index, id: d.id, ...('name' in d ? { name: d.name } : {}), argumentsDelta: m }
          : { type: delta, index: d.index, text: m };
      events.push({ type: 'assistant/chunk', seq: o.seq0 + k, time, data: { turn: d.turn, step: d.step, chunk } });
    });
  }
  return { header, events };
}

/** The model-visible history through `at` (inclusive), by the rules of the seeds. */
export function deriveAt(events: readonly RawEvent[], at: number): unknown[] {
  const nodes: number[] = [];
  for (const e of events.slice(0, at + 1)) {
    const op = e.surfaceOp;
    if (op === undefined) continue;
    if (op === 'append') nodes.push(e.seq);
    else {
      const i = nodes.indexOf(op.start);
      const j = nodes.indexOf(op.end);
      nodes.splice(i, j - i + 1, e.seq);
    }
  }
  const out: unknown[] = [];
  for (const seq of nodes) {
    const e = events[seq]!;
    if (e.type === 'user/message') out.push(e.data);
    else if (e.type === 'assistant/message' && e.data.message.content.length > 0) out.push(e.data.message);
    else if (e.type === 'tool/result') out.push(e.data.message);
  }
  return out;
}

const DELTA_NAME: Record<string, string> = { 'text-delta': 'text', 'reasoning-delta': 'reasoning', 'tool-call-delta': 'tool-call' };

/**
 * For each maximal run of consecutive `assistant/chunk` events, its first seq and the delta
 * counts per block kind in order of first appearance, e.g. `reasoning ×16 deltas, tool-call ×9 deltas`.
 */
export function chunkRuns(events: readonly RawEvent[]): { seq: number; deltas: string }[] {
  const runs: { seq: number; deltas: string }[] = [];
  let i = 0;
  while (i < events.length) {
    if (events[i]!.type !== 'assistant/chunk') {
      i++;
      continue;
    }
    const seq = events[i]!.seq;
    const counts = new Map<string, number>();
    for (; i < events.length && events[i]!.type === 'assistant/chunk'; i++) {
      const name = DELTA_NAME[events[i]!.data.chunk.type as string];
      if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    runs.push({ seq, deltas: [...counts].map(([k, n]) => `${k} ×${n} ${n === 1 ? 'delta' : 'deltas'}`).join(', ') });
  }
  return runs;
}
