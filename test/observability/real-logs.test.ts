/**
 * Every real dsh log in ../shared/fixtures/dsh that loads maps to well-formed traces: no throw
 * (content on or off), ends never before starts, children inside their turn, one trace per turn,
 * unique ids, and token totals equal to a sum taken from the log by other means.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { loadJsonl, type LoadedLog } from '../../src/session/index.js';
import type { TokenUsage } from '../../src/model/usage.js';
import { mapSession } from '../../src/observability/index.js';
import { describeShared, hasShared, sharedPath } from '../support/shared.js';

const files = hasShared
  ? readdirSync(sharedPath('fixtures', 'dsh'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
  : [];

function load(name: string): LoadedLog | undefined {
  try {
    return loadJsonl(readFileSync(sharedPath('fixtures', 'dsh', name), 'utf8'), { file: name, placeholders: 'warn' });
  } catch {
    return undefined; // refused by the loader (as dsh refuses it): nothing to map
  }
}

/** Provider input (cache included) from the log: message usage, plus usage of attempts that left no message. */
function independentInput(log: LoadedLog): number {
  const tot = (u: TokenUsage): number => u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
  const events = log.session.events;
  const cited = new Set<number>();
  let sum = 0;
  for (const e of events) {
    if (e.type !== 'assistant/message') continue;
    for (const s of e.sourceEventSeqs ?? []) cited.add(s);
    let u = e.data.usage;
    if (!u) {
      for (const s of e.sourceEventSeqs ?? []) {
        const c = events[s];
        if (c?.type === 'assistant/chunk' && c.data.chunk.type === 'usage') u = c.data.chunk.usage;
      }
    }
    if (u) sum += tot(u);
  }
  for (const e of events)
    if (e.type === 'assistant/chunk' && e.data.chunk.type === 'usage' && !cited.has(e.seq)) sum += tot(e.data.chunk.usage);
  return sum;
}

describeShared('real dsh logs map to well-formed traces', () => {
  const loaded = files.map((f) => [f, load(f)] as const).filter((x): x is readonly [string, LoadedLog] => x[1] !== undefined);

  it('has logs to map', () => {
    expect(files.length).toBe(101);
    expect(loaded.length).toBeGreaterThan(90);
  });

  for (const [name, log] of loaded) {
    it(name, () => {
      const full = mapSession(log, { content: 'full', inherited: 'include' });
      const m = mapSession(log, { inherited: 'include' });
      expect(full.spans.map((s) => s.spanId)).toEqual(m.spans.map((s) => s.spanId));

      const turnStarts = log.session.events.filter((e) => e.type === 'turn/start').length;
      expect(m.turns.length).toBe(turnStarts);
      expect(new Set(m.turns.map((t) => t.traceId)).size).toBe(turnStarts);
      expect(new Set(m.spans.map((s) => s.spanId)).size).toBe(m.spans.length);
      for (const t of m.turns) {
        const [root, ...children] = t.spans;
        expect(root!.name).toBe('invoke_agent dsh');
        expect(root!.endTime).toBeGreaterThanOrEqual(root!.startTime);
        for (const s of children) {
          expect(s.parentSpanId).toBe(root!.spanId);
          expect(s.traceId).toBe(root!.traceId);
          expect(s.startTime).toBeGreaterThanOrEqual(root!.startTime);
          expect(s.endTime).toBeGreaterThanOrEqual(s.startTime);
          expect(s.endTime).toBeLessThanOrEqual(root!.endTime);
        }
      }
      const input = m.spans.reduce((n, s) => n + ((s.attributes['gen_ai.usage.input_tokens'] as number | undefined) ?? 0), 0);
      expect(input).toBe(independentInput(log));
    });
  }
});
