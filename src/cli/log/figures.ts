/**
 * How the query commands print figures: durations, money, token counts, ratios, seq lists and
 * event references. Everything returned is safe to print (log text goes through `text.ts`).
 */
import type { Cost, Dist, EventRef, Tokens } from '../../query/index.js';
import { count, oneLine } from '../text.js';

export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '-';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(v / 60_000);
  const s = Math.round((v % 60_000) / 1000);
  return m < 60 ? `${m} min ${s} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function pct(r: number | null): string {
  return r === null ? '-' : `${(r * 100).toFixed(r >= 0.995 || r === 0 ? 0 : 1)}%`;
}

/** An amount with enough digits that a small session does not read as zero. */
export function money(amount: number, currency: string): string {
  const digits = amount === 0 ? 2 : amount < 0.01 ? 6 : amount < 1 ? 4 : 2;
  const n = amount.toFixed(digits);
  return currency === 'USD' ? `$${n}` : `${n} ${oneLine(currency)}`;
}

/** `$0.0123` (or several currencies); `-` when nothing was priced. */
export function costTotal(c: Cost): string {
  const parts = Object.entries(c.byCurrency).map(([cur, v]) => money(v, cur));
  return parts.length ? parts.join(' + ') : '-';
}

/** The cost with what could not be priced, said: `$0.0123 (2 calls unpriced)`. */
export function costLine(c: Cost): string {
  const total = costTotal(c);
  const periods = Object.entries(c.byPeriod).map(([p, n]) => `${n} ${p}`);
  const priced = c.pricedCalls
    ? `${count(c.pricedCalls)} call${c.pricedCalls === 1 ? '' : 's'} priced${periods.length ? `: ${periods.join(', ')}` : ''}`
    : 'no call priced';
  const unpriced = c.unpricedCalls ? `; ${count(c.unpricedCalls)} unpriced` : '';
  return `${total} (${priced}${unpriced})`;
}

/** One line per unpriced model: `p:m, 2 calls: no price for p:m; set one under "prices" …`. */
export function unpricedLines(c: Cost): string[] {
  return c.unpriced.map((u) => `${oneLine(u.model)}, ${count(u.calls)} call${u.calls === 1 ? '' : 's'}: ${oneLine(u.message)}`);
}

export function tokensLine(t: Tokens): string {
  const cache = [`cache read ${count(t.cacheRead)}`];
  if (t.cacheWrite) cache.push(`write ${count(t.cacheWrite)}`);
  return (
    `in ${count(t.input)} (with cache ${count(t.inputWithCache)}; ${cache.join(', ')}; hit ${pct(t.cacheHitRatio)}) · out ` +
    `${count(t.output)} (reasoning ${count(t.reasoning)}) · ${count(t.calls)} call${t.calls === 1 ? '' : 's'}`
  );
}

export function distLine(d: Dist): string {
  if (d.count === 0) return '-';
  return `p50 ${ms(d.p50)} · p95 ${ms(d.p95)} · max ${ms(d.max)} · total ${ms(d.total)} (${count(d.count)})`;
}

export function countsLine(m: Record<string, number>, order?: readonly string[]): string {
  const keys = Object.keys(m);
  if (keys.length === 0) return 'none';
  const rank = (k: string): number => (order?.includes(k) ? order.indexOf(k) : (order?.length ?? 0));
  keys.sort((a, b) => rank(a) - rank(b) || m[b]! - m[a]! || (a < b ? -1 : 1));
  return keys.map((k) => `${oneLine(k)} ${count(m[k]!)}`).join(' · ');
}

export const REASON_ORDER = ['completed', 'aborted', 'blocked', 'error', 'max-tokens', 'interrupted', 'live', 'dangling'] as const;

/** `#8–38` for a contiguous list, else `#3, #7, #9–12`; long lists end with `… (N)`. */
export function seqList(seqs: readonly number[], max = 12): string {
  if (seqs.length === 0) return 'none';
  const runs: string[] = [];
  let start = seqs[0]!;
  let prev = start;
  const flush = (): void => {
    runs.push(start === prev ? `#${start}` : `#${start}–${prev}`);
  };
  for (let i = 1; i < seqs.length; i++) {
    const s = seqs[i]!;
    if (s === prev + 1) {
      prev = s;
      continue;
    }
    flush();
    start = prev = s;
  }
  flush();
  return runs.length > max ? `${runs.slice(0, max).join(', ')}, … (${count(seqs.length)})` : runs.join(', ');
}

/** `#39 assistant/message (turn 1 step 1)`. */
export function refText(r: EventRef): string {
  const where = r.turn !== undefined ? ` (turn ${r.turn}${r.step !== undefined ? ` step ${r.step}` : ''})` : '';
  return `#${r.seq} ${oneLine(r.type)}${where}`;
}

/**
 * References grouped into runs of one type: `#8–38 assistant/chunk ×31`, `#40 tool/call`. A list
 * of chunk seqs (an assistant message cites hundreds) stays one line.
 */
export function refsText(refs: readonly EventRef[]): string {
  if (refs.length === 0) return 'none';
  const groups: { type: string; seqs: number[] }[] = [];
  for (const r of refs) {
    const g = groups[groups.length - 1];
    if (g && g.type === r.type) g.seqs.push(r.seq);
    else groups.push({ type: r.type, seqs: [r.seq] });
  }
  return groups.map((g) => `${seqList(g.seqs, 4)} ${oneLine(g.type)}${g.seqs.length > 1 ? ` ×${count(g.seqs.length)}` : ''}`).join(', ');
}
