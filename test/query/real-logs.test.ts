/**
 * The queries on the real dsh logs of ../shared/fixtures/dsh. Every expected figure is computed
 * in this file from the raw JSONL lines (JSON.parse of each line; packed chunk rows hold only
 * deltas, which no figure here needs), never from the queries' own output.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { loadJsonl, type LoadedLog } from '../../src/session/index.js';
import { callOf, provenance, stats, turnOf, alertsOf, DEFAULT_ALERTS } from '../../src/query/index.js';
import { PriceTable } from '../../src/llm/pricing.js';
import { describeShared, hasShared, sharedPath } from '../support/shared.js';

const dir = hasShared ? sharedPath('fixtures', 'dsh') : '';
const files = hasShared
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
  : [];

type Raw = { type: string; seq: number; time: number; data: Record<string, any>; sourceEventSeqs?: number[]; surfaceOp?: unknown };

function rawEvents(name: string, below: number): Raw[] {
  const out: Raw[] = [];
  for (const line of readFileSync(`${dir}/${name}`, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let o: any;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof o?.seq === 'number' && o.seq < below && typeof o.type === 'string' && !o.type.endsWith('-chunks')) out.push(o);
  }
  return out;
}

function load(name: string): LoadedLog | undefined {
  try {
    return loadJsonl(readFileSync(`${dir}/${name}`, 'utf8'), { file: name, placeholders: 'warn' });
  } catch {
    return undefined;
  }
}

const RATES = { input: 1, cacheRead: 0.25, cacheWrite: 2, output: 3 };

describeShared('queries on the real dsh logs', () => {
  const logs = files.map((f) => [f, load(f)] as const).filter((x): x is readonly [string, LoadedLog] => x[1] !== undefined);

  it('has logs', () => {
    expect(logs.length).toBeGreaterThan(90);
  });

  for (const [name, log] of logs) {
    it(name, () => {
      const raw = rawEvents(name, log.eventCount);
      const models = new Set<string>();
      // --- tokens and cost, from the raw lines
      const cited = new Set<number>();
      for (const e of raw) if (e.type === 'assistant/message') for (const s of e.sourceEventSeqs ?? []) cited.add(s);
      const bySeq = new Map(raw.map((e) => [e.seq, e]));
      const bills: { u: any; model: string | undefined }[] = [];
      let route: string | undefined;
      for (const e of raw) {
        if (e.type === 'request/context') route = e.data.model;
        if (e.type === 'request/header') route = e.data.header?.config?.model;
        if (e.type === 'assistant/message') {
          let u = e.data.usage;
          if (!u)
            for (const s of e.sourceEventSeqs ?? []) if (bySeq.get(s)?.data.chunk?.type === 'usage') u = bySeq.get(s)!.data.chunk.usage;
          if (u) bills.push({ u, model: e.data.message.source?.model });
        }
        if (e.type === 'assistant/chunk' && e.data.chunk.type === 'usage' && !cited.has(e.seq))
          bills.push({ u: e.data.chunk.usage, model: route });
        if (e.type === 'compaction/summary' && e.data.usage) bills.push({ u: e.data.usage, model: e.data.model });
      }
      for (const b of bills) if (b.model) models.add(b.model);
      const prices = new PriceTable({ defaults: false, config: Object.fromEntries([...models].map((m) => [m, RATES])) });
      const st = stats(log, { prices });
      const sum = (k: string): number => bills.reduce((a, b) => a + (b.u[k] ?? 0), 0);
      expect(st.tokens.calls).toBe(bills.length);
      expect(st.tokens.input).toBe(sum('inputTokens'));
      expect(st.tokens.cacheRead).toBe(sum('cacheReadTokens'));
      expect(st.tokens.cacheWrite).toBe(sum('cacheWriteTokens'));
      expect(st.tokens.output).toBe(sum('outputTokens'));
      expect(st.tokens.reasoning).toBe(sum('reasoningTokens'));
      const allIn = sum('inputTokens') + sum('cacheReadTokens') + sum('cacheWriteTokens');
      expect(st.tokens.cacheHitRatio).toBe(allIn ? sum('cacheReadTokens') / allIn : null);
      const priced = bills.filter((b) => b.model);
      const cost = priced.reduce(
        (a, b) =>
          a +
          ((b.u.inputTokens ?? 0) * 1 + (b.u.cacheReadTokens ?? 0) * 0.25 + (b.u.cacheWriteTokens ?? 0) * 2 + (b.u.outputTokens ?? 0) * 3) /
            1e6,
        0,
      );
      if (priced.length) expect(st.cost.byCurrency.USD).toBeCloseTo(cost, 12);
      expect(st.cost.pricedCalls).toBe(priced.length);
      expect(st.cost.unpricedCalls).toBe(bills.length - priced.length);

      // --- turns and reasons
      const starts = raw.filter((e) => e.type === 'turn/start');
      const ends = raw.filter((e) => e.type === 'turn/end');
      expect(st.turns).toBe(starts.length);
      const reasons: Record<string, number> = {};
      for (const e of ends) reasons[e.data.reason.kind] = (reasons[e.data.reason.kind] ?? 0) + 1;
      if (starts.length > ends.length) reasons.dangling = starts.length - ends.length;
      expect(st.reasons).toEqual(reasons);
      expect(st.retries.count).toBe(raw.filter((e) => e.type === 'llm/retry').length);

      // --- tools
      const calls = raw.filter((e) => e.type === 'tool/call');
      const results = raw.filter((e) => e.type === 'tool/result' && e.surfaceOp === 'append');
      const byName: Record<string, number> = {};
      for (const c of calls) byName[c.data.name] = (byName[c.data.name] ?? 0) + 1;
      for (const [n, k] of Object.entries(byName)) expect(st.tools.find((t) => t.name === n)?.calls, n).toBeGreaterThanOrEqual(k);
      const failures = results.filter((r) => r.data.error !== undefined || r.data.message.content[0]?.isError === true).length;
      expect(st.toolFailures).toBe(failures);

      // --- every call's round trip
      const place = new Map<number, { turn: number; step: number }>();
      let turn = 0;
      let step = 0;
      for (const e of raw) {
        if (e.type === 'turn/start') turn = e.data.turn;
        if (e.type === 'step/start') step = e.data.step;
        place.set(e.seq, { turn, step });
      }
      for (const c of calls) {
        const { turn: t, step: s } = place.get(c.seq)!;
        const result = results.find(
          (r) => r.data.message.content[0]?.toolCallId === c.data.callId && place.get(r.seq)!.turn === t && place.get(r.seq)!.step === s,
        );
        const issuer = raw.find(
          (m) =>
            m.type === 'assistant/message' &&
            place.get(m.seq)!.turn === t &&
            place.get(m.seq)!.step === s &&
            m.data.message.content.some((b: any) => b.type === 'tool-call' && b.id === c.data.callId),
        );
        const trip = callOf(log, c.data.callId).find((x) => x.call?.seq === c.seq);
        expect(trip, c.data.callId).toBeDefined();
        expect(trip!.name).toBe(c.data.name);
        expect(trip!.result?.event.seq).toBe(result?.seq);
        expect(trip!.issuedBy?.message.seq).toBe(issuer?.seq);
        expect(trip!.call!.arguments).toBe(c.data.arguments);
        if (result) expect(trip!.timings.durationMs).toBe(Math.max(0, result.time - c.time));
        const asked = raw.filter((a) => a.type === 'approval/asked' && a.data.callId === c.data.callId);
        expect(trip!.approvals.map((a) => a.asked.seq)).toEqual(asked.map((a) => a.seq));
      }
      expect(st.unanswered.length).toBe(
        calls.filter(
          (c) =>
            !results.some(
              (r) =>
                r.data.message.content[0]?.toolCallId === c.data.callId &&
                place.get(r.seq)!.turn === place.get(c.seq)!.turn &&
                place.get(r.seq)!.step === place.get(c.seq)!.step,
            ),
        ).length,
      );

      // --- provenance of every citing event, both ways
      for (const e of raw) {
        if (!e.sourceEventSeqs) continue;
        const p = provenance(log, e.seq);
        expect(p.cites.map((r) => r.seq)).toEqual(e.sourceEventSeqs);
        for (const s of e.sourceEventSeqs.slice(0, 3)) expect(provenance(log, s).citedBy.map((r) => r.seq)).toContain(e.seq);
      }

      // --- turns
      for (const s of starts) {
        const t = turnOf(log, s.data.turn);
        const end = ends.find((e) => e.data.turn === s.data.turn);
        expect(t.start).toBe(s.seq);
        expect(t.end).toBe(end?.seq);
      }

      // --- alerts: one per error, max-tokens, blocked turn, dangling turn and unanswered call
      const alerts = alertsOf(st, DEFAULT_ALERTS);
      expect(alerts.length).toBe(
        (reasons.error ?? 0) + (reasons['max-tokens'] ?? 0) + (reasons.blocked ?? 0) + (reasons.dangling ?? 0) + st.unanswered.length,
      );
    });
  }
});
