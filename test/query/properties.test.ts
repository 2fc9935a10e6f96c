/**
 * Properties of the queries over generated sessions (support/gen.ts): each answer is checked
 * against the driver's own record of what it wrote, never against another query, and the same
 * answers come from the live session and from its JSONL form loaded back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, type SessionEvent } from '../../src/session/index.js';
import { callOf, provenance, stats, turnOf, viewOf, QueryError, alertsOf, type SessionStats } from '../../src/query/index.js';
import { PriceTable } from '../../src/llm/pricing.js';
import { drive, opsArb, MODEL } from './support/gen.js';

const RUNS = 120;
const prices = new PriceTable({ defaults: false, config: { [MODEL.model]: { input: 1, cacheRead: 0.25, output: 3 } } });

describe('query properties over generated sessions', () => {
  it('provenance is symmetric: cites ⇔ citedBy, replaces ⇔ replacedBy', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const { s, rec } = drive(ops);
        const all = Array.from({ length: s.length }, (_, i) => provenance(s, i));
        for (const p of all) {
          for (const c of p.cites) expect(all[c.seq]!.citedBy.map((r) => r.seq)).toContain(p.event.seq);
          for (const c of p.citedBy) expect(all[c.seq]!.cites.map((r) => r.seq)).toContain(p.event.seq);
          for (const r of p.replaces) expect(all[r.seq]!.replacedBy?.seq).toBe(p.event.seq);
          if (p.replacedBy) expect(all[p.replacedBy.seq]!.replaces.map((r) => r.seq)).toContain(p.event.seq);
          // The oracle: what the driver shadowed with each replace.
          expect(p.replaces.map((r) => r.seq)).toEqual(rec.replaced.get(p.event.seq) ?? []);
          // Chains: forward links each shadowed by the next; back links reachable by replaces.
          let via = p.event.seq;
          for (const l of p.chainForward) {
            expect(l.via).toBe(via);
            expect(rec.replaced.get(l.seq)).toContain(via);
            via = l.seq;
          }
          for (const l of p.chainBack) expect(rec.replaced.get(l.via)).toContain(l.seq);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('every recorded call pairs with callOf, and stats count exactly the unanswered ones', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const d = drive(ops);
        const { s, rec } = d;
        const st = stats(s, { prices });
        for (const c of rec.calls) {
          const trips = callOf(s, c.callId);
          const trip = trips.find((t) => t.call?.seq === c.seq);
          expect(trip, c.callId).toBeDefined();
          expect(trip!.turn).toBe(c.turn);
          expect(trip!.step).toBe(c.step);
          expect(trip!.result?.event.seq).toBe(c.resultSeq);
          expect(trip!.state).toBe(c.resultSeq === undefined ? 'unanswered' : 'answered');
          if (c.outcome) expect(trip!.result!.isError).toBe(c.outcome !== 'ok');
          expect(trip!.issuedBy?.message.type).toBe('assistant/message');
          // The chunks that carried this call: its block's start, its argument delta, its block's end.
          const chunks = trip!.issuedBy!.chunks.map((seq) => (s.at(seq) as SessionEvent<'assistant/chunk'>).data.chunk);
          expect(chunks.map((ch) => ch.type)).toEqual(['block-start', 'tool-call-delta', 'block-end']);
          expect(JSON.stringify(chunks.slice(1))).toContain(c.callId);
        }
        for (const n of rec.notStarted) expect(callOf(s, n.callId).find((t) => t.result?.event.seq === n.seq)?.state).toBe('not-started');
        // A session nobody holds: an open turn is dangling, its open calls unanswered too, and so
        // are the calls the model issued that were never dispatched (at their message's seq).
        const undispatched = rec.issued.filter((b) => !b.dispatched);
        const expected = [...rec.calls.filter((c) => c.resultSeq === undefined), ...undispatched].map((c) => c.seq).sort((a, b) => a - b);
        expect(st.unanswered.map((u) => u.seq).sort((a, b) => a - b)).toEqual(expected);
        // A live writer: the open turn's calls are in flight, not unanswered.
        const live = stats(s, { prices, writer: { state: 'live' } });
        const inFlight = (c: (typeof rec.calls)[number]): boolean => c.turn === d.openTurn && c.step === d.openStep;
        expect(live.unanswered.map((u) => u.seq).sort((a, b) => a - b)).toEqual(
          [...rec.calls.filter((c) => c.resultSeq === undefined), ...undispatched]
            .filter((c) => !inFlight(c))
            .map((c) => c.seq)
            .sort((a, b) => a - b),
        );
        const callsByName = new Map<string, number>();
        for (const c of rec.calls) callsByName.set(c.name, (callsByName.get(c.name) ?? 0) + 1);
        for (const t of st.tools) if (t.name !== '?') expect(t.calls).toBeGreaterThanOrEqual(callsByName.get(t.name) ?? 0);
        expect(st.toolCalls).toBe(rec.calls.length + rec.notStarted.length + undispatched.length);
        expect(st.toolFailures).toBe(rec.calls.filter((c) => c.outcome && c.outcome !== 'ok').length + rec.notStarted.length);
      }),
      { numRuns: RUNS },
    );
  });

  it('tokens and cost are the sums of what was billed, and turns and steps add up to the session', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const d = drive(ops);
        const { s, rec } = d;
        const st = stats(s, { prices });
        const sum = (k: 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'reasoningTokens'): number =>
          rec.billed.reduce((a, u) => a + (u[k] ?? 0), 0);
        expect(st.tokens.calls).toBe(rec.billed.length);
        expect(st.tokens.input).toBe(sum('inputTokens'));
        expect(st.tokens.output).toBe(sum('outputTokens'));
        expect(st.tokens.cacheRead).toBe(sum('cacheReadTokens'));
        expect(st.tokens.reasoning).toBe(sum('reasoningTokens'));
        expect(st.tokens.inputWithCache).toBe(sum('inputTokens') + sum('cacheReadTokens'));
        const expectedCost = rec.billed.reduce(
          (a, u) => a + (u.inputTokens * 1 + (u.cacheReadTokens ?? 0) * 0.25 + u.outputTokens * 3) / 1e6,
          0,
        );
        if (rec.billed.length) expect(st.cost.byCurrency.USD).toBeCloseTo(expectedCost, 12);
        expect(st.cost.pricedCalls).toBe(rec.billed.length);
        // Turn totals add up to at most the session (compactions outside turns are the rest).
        const turns = st.perTurn!;
        expect(turns.reduce((a, t) => a + t.tokens.calls, 0)).toBeLessThanOrEqual(st.tokens.calls);
        for (const t of turns) expect(t.steps.reduce((a, x) => a + x.tokens.calls, 0)).toBeLessThanOrEqual(t.tokens.calls);
        expect(st.retries.count).toBe(rec.retries);
        expect(Object.values(st.errors.model).reduce((a, n) => a + n, 0)).toBe(rec.failedAttempts);
        // Reasons: one per turn, the open one dangling.
        expect(Object.values(st.reasons).reduce((a, n) => a + n, 0)).toBe(rec.turns.size);
        for (const [turn, kind] of rec.turns) {
          const t = turns.find((x) => x.turn === turn)!;
          expect(t.state).toBe(kind === undefined ? 'dangling' : 'ended');
          expect(t.reason).toBe(kind);
        }
        const alerts = alertsOf(st);
        expect(alerts.filter((a) => a.kind === 'dangling').length).toBe([...rec.turns.values()].filter((k) => k === undefined).length);
        expect(alerts.filter((a) => a.kind === 'error').length).toBe([...rec.turns.values()].filter((k) => k === 'error').length);
      }),
      { numRuns: RUNS },
    );
  });

  it('turnOf returns the contiguous events of exactly that turn', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const { s, rec } = drive(ops);
        for (const [n, kind] of rec.turns) {
          const t = turnOf(s, n);
          expect(t.events[0]!.type).toBe('turn/start');
          expect((t.events[0] as SessionEvent<'turn/start'>).data.turn).toBe(n);
          t.events.forEach((e, i) => expect(e.seq).toBe(t.start + i));
          if (kind !== undefined) {
            expect(t.events.at(-1)!.type).toBe('turn/end');
            expect(t.reason?.kind).toBe(kind);
          } else expect(t.end).toBeUndefined();
        }
        expect(() => turnOf(s, rec.turns.size + 1)).toThrow(QueryError);
      }),
      { numRuns: RUNS },
    );
  });

  it('a session and its JSONL form loaded back give the same answers', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const { s } = drive(ops);
        const loaded = loadJsonl(encodeJsonl(s.header, s.events), { repair: false });
        const strip = (x: SessionStats): unknown => ({ ...x, events: 0 });
        expect(strip(stats(loaded, { prices }))).toEqual(strip(stats(s, { prices })));
        expect(viewOf(loaded).length).toBe(s.length);
        for (let i = 0; i < s.length; i += 7) expect(provenance(loaded, i)).toEqual(provenance(s, i));
      }),
      { numRuns: 60 },
    );
  });
});
