/**
 * The price table: DeepSeek's published prices by period and tier, configured prices, and calls
 * that cannot be priced. Expected costs are written out from the published rates by hand.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PriceTable, costAt, inPeak, DEEPSEEK_DEFAULT_PRICES } from '../../src/llm/pricing.js';
import { pricesConfigShape } from '../../src/llm/pricing-config.js';

const usage = { inputTokens: 1_000_000, cacheReadTokens: 2_000_000, outputTokens: 500_000 };
const at = (iso: string): number => Date.parse(iso);

describe('DeepSeek defaults', () => {
  const table = new PriceTable();
  const price = (model: string, iso: string, provider = 'deepseek') => table.price(usage, { provider, model, time: at(iso) });

  it('prices V4 Flash at the flat rates before peak billing (2026-08-03)', () => {
    const p = price('deepseek-v4-flash', '2026-08-03T12:00:00Z');
    // 1M miss × $0.14 + 2M hit × $0.0028 + 0.5M out × $0.28
    expect(p).toMatchObject({ priced: true, period: 'flat', currency: 'USD' });
    expect(p.priced && p.amount).toBeCloseTo(0.14 + 2 * 0.0028 + 0.5 * 0.28, 12);
  });

  it('uses the peak tier on weekday peak hours and off-peak otherwise (V4.1 Flash)', () => {
    // 2026-11-30 is a Monday; 02:30 UTC lies in 01:00–04:00, 05:00 between the windows, 09:59 in 06:00–10:00.
    const peak = price('deepseek-flash', '2026-11-30T02:30:00Z');
    expect(peak).toMatchObject({ priced: true, period: 'peak' });
    expect(peak.priced && peak.amount).toBeCloseTo(0.3 + 2 * 0.006 + 0.5 * 1.2, 12);
    const between = price('deepseek-flash', '2026-11-30T05:00:00Z');
    expect(between).toMatchObject({ priced: true, period: 'off-peak' });
    expect(between.priced && between.amount).toBeCloseTo(0.15 + 2 * 0.003 + 0.5 * 0.6, 12);
    expect(price('deepseek-flash', '2026-11-30T09:59:59Z')).toMatchObject({ period: 'peak' });
    expect(price('deepseek-flash', '2026-11-30T10:00:00Z')).toMatchObject({ period: 'off-peak' });
    // Saturday 2026-11-28, 02:30: weekends are off-peak.
    expect(price('deepseek-flash', '2026-11-28T02:30:00Z')).toMatchObject({ period: 'off-peak' });
  });

  it('bills the retired V4 Flash name as V4.1 Flash after 2026-09-10 04:00 UTC, and at V4 prices before', () => {
    const before = price('deepseek-v4-flash', '2026-09-10T03:59:59Z');
    const after = price('deepseek-v4-flash', '2026-09-10T04:00:00Z');
    // Thursday 03:59 is peak; Thursday 04:00 is off-peak.
    expect(before.priced && before.amount).toBeCloseTo(0.44 + 2 * 0.014 + 0.5 * 1.32, 12);
    expect(after.priced && after.amount).toBeCloseTo(0.15 + 2 * 0.003 + 0.5 * 0.6, 12);
  });

  it('prices V4 Pro peak and off-peak since 2026-08-16 16:00 UTC', () => {
    const p = price('deepseek-v4-pro', '2026-12-01T07:00:00Z', 'deepseek-official');
    expect(p.priced && p.amount).toBeCloseTo(1.32 + 2 * 0.044 + 0.5 * 3.96, 12);
    const flat = price('deepseek-v4-pro', '2026-08-16T15:59:59Z');
    expect(flat).toMatchObject({ period: 'flat' });
    expect(flat.priced && flat.amount).toBeCloseTo(0.435 + 2 * 0.003625 + 0.5 * 0.87, 12);
  });

  it('says why a call has no price: unknown model, another provider, a date before the defaults, no model', () => {
    expect(price('gpt-9', '2026-11-30T05:00:00Z')).toMatchObject({ priced: false, reason: 'unknown-model' });
    expect(price('deepseek-flash', '2026-11-30T05:00:00Z', 'openrouter')).toMatchObject({ priced: false, reason: 'unknown-model' });
    expect(table.price(usage, { provider: undefined, model: 'deepseek-flash', time: at('2026-11-30T05:00:00Z') })).toMatchObject({
      priced: false,
      reason: 'unknown-model',
    });
    const old = price('deepseek-v4-flash', '2025-01-01T00:00:00Z');
    expect(old).toMatchObject({ priced: false, reason: 'no-price-at-time' });
    expect(!old.priced && old.message).toMatch(/2025-01-01T00:00:00.000Z/);
    expect(price('deepseek-flash', '2026-09-10T03:00:00Z')).toMatchObject({ priced: false, reason: 'no-price-at-time' });
    expect(table.price(usage, { provider: 'deepseek', model: undefined, time: 0 })).toMatchObject({ priced: false, reason: 'no-model' });
  });

  it('has no gap or overlap between the periods of one model', () => {
    for (const model of ['deepseek-v4-flash', 'deepseek-v4-pro']) {
      const rules = DEEPSEEK_DEFAULT_PRICES.filter((r) => r.models.includes(model)).sort((a, b) => a.from! - b.from!);
      for (let i = 1; i < rules.length; i++) expect(rules[i]!.from).toBe(rules[i - 1]!.until);
    }
  });
});

describe('configured prices', () => {
  it('win over the defaults, provider:model over the bare name, and price cache writes', () => {
    const table = new PriceTable({
      config: {
        'deepseek-flash': { input: 1, cacheRead: 0.5, output: 4 },
        'openrouter:deepseek-flash': { input: 2, cacheRead: 1, cacheWrite: 3, output: 8, currency: 'EUR' },
      },
    });
    const u = { inputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000, outputTokens: 1_000_000 };
    const own = table.price(u, { provider: 'deepseek', model: 'deepseek-flash', time: 0 });
    // No cacheWrite rate: writes are charged as input.
    expect(own).toMatchObject({ priced: true, amount: 1 + 0.5 + 1 + 4, currency: 'USD', period: 'flat' });
    expect(table.price(u, { provider: 'openrouter', model: 'deepseek-flash', time: 0 })).toMatchObject({
      priced: true,
      amount: 2 + 1 + 3 + 8,
      currency: 'EUR',
    });
  });

  it('take a peak tier', () => {
    const table = new PriceTable({
      defaults: false,
      config: { m: { input: 1, output: 1, peak: { hoursUtc: [[9, 17]], weekdays: [1, 2, 3, 4, 5], rates: { input: 2, output: 2 } } } },
    });
    const u = { inputTokens: 1_000_000, outputTokens: 0 };
    expect(table.price(u, { provider: 'x', model: 'm', time: at('2026-11-30T12:00:00Z') })).toMatchObject({ amount: 2, period: 'peak' });
    expect(table.price(u, { provider: 'x', model: 'm', time: at('2026-11-29T12:00:00Z') })).toMatchObject({
      amount: 1,
      period: 'off-peak',
    });
    // Cache reads without a rate are charged as input.
    expect(
      table.price({ inputTokens: 0, cacheReadTokens: 1_000_000, outputTokens: 0 }, { provider: 'x', model: 'm', time: 0 }),
    ).toMatchObject({ amount: 1 });
  });

  it('are refused when malformed, naming the path', () => {
    const schema = z.strictObject(pricesConfigShape);
    const bad = [
      { prices: { m: { input: -1, output: 1 } } },
      { prices: { m: { input: 1 } } },
      { prices: { m: { input: 1, output: 1, currency: 'dollars' } } },
      { prices: { m: { input: 1, output: 1, peak: { hoursUtc: [[10, 9]], rates: { input: 1, output: 1 } } } } },
      { prices: { m: { input: 1, output: 1, bogus: 1 } } },
      { prices: { m: { input: Number.POSITIVE_INFINITY, output: 1 } } },
    ];
    for (const b of bad) expect(schema.safeParse(b).success, JSON.stringify(b)).toBe(false);
    expect(schema.safeParse({ prices: { m: { input: 0, output: 0 } } }).success).toBe(true);
  });
});

describe('costAt and inPeak', () => {
  it('adds the disjoint kinds once each', () => {
    expect(
      costAt(
        { inputTokens: 10, cacheReadTokens: 20, cacheWriteTokens: 30, outputTokens: 40, reasoningTokens: 40 },
        { input: 1e6, cacheRead: 1e6, cacheWrite: 1e6, output: 1e6 },
      ),
    ).toBe(100);
  });
  it('treats an invalid date as off-peak', () => {
    expect(inPeak({ hoursUtc: [[0, 24]], rates: { input: 1, cacheRead: 1, output: 1 } }, 9e15)).toBe(false);
  });
});
