/**
 * What a model call cost: a price table (per model, in the config, with DeepSeek's published
 * prices as defaults) and the cost of one call's recorded usage under it. Pure and synchronous,
 * so the stats commands, the viewer and a status line can all price usage the same way.
 *
 * Prices are per million tokens. The log's token kinds are disjoint (`inputTokens` excludes cache
 * reads and writes; reasoning is inside output), so a call costs
 *
 *     input × rate.input + cacheRead × rate.cacheRead + cacheWrite × rate.cacheWrite + output × rate.output
 *
 * with no kind counted twice. A provider without a cache-write charge (DeepSeek) prices cache
 * writes as ordinary input.
 *
 * A price depends on when the call was made: DeepSeek changes its prices and bills peak hours at
 * twice the off-peak rate. Each rule therefore has a validity interval and optional peak windows,
 * and a call is priced at its event time. A model no rule names, or a call outside every rule's
 * interval, has no price: the caller gets the reason, never a guess.
 */
import type { PriceEntry } from './pricing-config.js';
import type { TokenUsage } from '../model/usage.js';

/** Rates per million tokens, in the rule's currency. */
export interface TokenRates {
  /** Prompt tokens neither read from nor written to the cache (a cache miss). */
  input: number;
  /** Prompt tokens read from the cache (a cache hit). */
  cacheRead: number;
  /** Prompt tokens written to the cache; absent: charged as `input`. */
  cacheWrite?: number;
  /** Output tokens, reasoning included. */
  output: number;
}

/** Hours (UTC, `[start, end)` in whole hours, 0–24) and weekdays (0 = Sunday) of a peak tier. */
export interface PeakTier {
  hoursUtc: readonly (readonly [number, number])[];
  /** Days the windows apply on; absent: every day. */
  weekdays?: readonly number[];
  rates: TokenRates;
}

export interface PriceRule {
  /** Model names this rule prices (as recorded in the log's `source.model`). */
  models: readonly string[];
  /** Provider routes it applies to; absent: any provider. */
  providers?: readonly string[];
  currency: string;
  /** Epoch ms the rule starts (inclusive) and ends (exclusive); absent: unbounded. */
  from?: number;
  until?: number;
  /** Rates outside the peak windows (or always, without `peak`). */
  rates: TokenRates;
  peak?: PeakTier;
  /** Where the figures come from, for reports. */
  source?: string;
}

/** The provider routes that reach DeepSeek's own API: `deepseek` (ours) and `deepseek-official` (dsh's). */
export const DEEPSEEK_PROVIDERS: readonly string[] = ['deepseek', 'deepseek-official'];

export const DEEPSEEK_PRICING_URL = 'https://api-docs.deepseek.com/quick_start/pricing';
/** When the defaults below were last checked against the page. */
export const DEEPSEEK_PRICES_CHECKED = '2026-12-01';

const utc = (iso: string): number => Date.parse(iso);
const MON_FRI = [1, 2, 3, 4, 5] as const;
/** DeepSeek's peak hours (UTC) since peak billing began on 2026-08-16. */
const DEEPSEEK_PEAK_HOURS: readonly (readonly [number, number])[] = [
  [1, 4],
  [6, 10],
];

function deepseekRule(
  models: string[],
  from: string,
  until: string | undefined,
  offPeak: [number, number, number],
  peak?: [number, number, number],
): PriceRule {
  const rates = (r: [number, number, number]): TokenRates => ({ cacheRead: r[0], input: r[1], output: r[2] });
  const rule: PriceRule = {
    models,
    providers: DEEPSEEK_PROVIDERS,
    currency: 'USD',
    from: utc(from),
    rates: rates(offPeak),
    source: DEEPSEEK_PRICING_URL,
  };
  if (until !== undefined) rule.until = utc(until);
  if (peak) rule.peak = { hoursUtc: DEEPSEEK_PEAK_HOURS, weekdays: MON_FRI, rates: rates(peak) };
  return rule;
}

/**
 * DeepSeek's published prices (USD per million tokens: cache hit, cache miss, output), as the
 * pricing page gave them for each period; docs/data-plane.md cites the page and the dates. Calls
 * before 2026-04-26 12:15 UTC (when cache-hit prices were cut to a tenth) are not priced.
 */
export const DEEPSEEK_DEFAULT_PRICES: readonly PriceRule[] = [
  // Flat prices, from the cache-hit cut to the start of peak billing. The legacy names were
  // aliases of V4 Flash (non-thinking and thinking mode) until DeepSeek retired them on 2026-07-24.
  deepseekRule(
    ['deepseek-v4-flash', 'deepseek-chat', 'deepseek-reasoner'],
    '2026-04-26T12:15:00Z',
    '2026-08-16T16:00:00Z',
    [0.0028, 0.14, 0.28],
  ),
  deepseekRule(['deepseek-v4-pro'], '2026-04-26T12:15:00Z', '2026-08-16T16:00:00Z', [0.003625, 0.435, 0.87]),
  // Peak billing: off-peak is half of peak.
  deepseekRule(
    ['deepseek-v4-flash', 'deepseek-v4-flash-vision-exp'],
    '2026-08-16T16:00:00Z',
    '2026-09-10T04:00:00Z',
    [0.007, 0.22, 0.66],
    [0.014, 0.44, 1.32],
  ),
  deepseekRule(['deepseek-v4-pro'], '2026-08-16T16:00:00Z', undefined, [0.022, 0.66, 1.98], [0.044, 1.32, 3.96]),
  // V4.1 Flash (`deepseek-flash`); requests under the retired V4 Flash names are billed as it.
  deepseekRule(
    ['deepseek-flash', 'deepseek-v4-flash', 'deepseek-v4-flash-vision-exp'],
    '2026-09-10T04:00:00Z',
    undefined,
    [0.003, 0.15, 0.6],
    [0.006, 0.3, 1.2],
  ),
];

// The config section's zod schema is in pricing-config.ts (loaded with the config file only).

function ratesOf(e: { input: number; cacheRead?: number | undefined; cacheWrite?: number | undefined; output: number }): TokenRates {
  const r: TokenRates = { input: e.input, cacheRead: e.cacheRead ?? e.input, output: e.output };
  if (e.cacheWrite !== undefined) r.cacheWrite = e.cacheWrite;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Pricing a call

export type PricePeriod = 'peak' | 'off-peak' | 'flat';

export interface CallPoint {
  provider: string | undefined;
  model: string | undefined;
  /** Epoch ms of the call (its event time). */
  time: number;
}

export type Priced =
  | { priced: true; amount: number; currency: string; period: PricePeriod; rates: TokenRates; rule: PriceRule }
  | { priced: false; reason: 'no-model' | 'unknown-model' | 'no-price-at-time'; message: string };

/** Is `time` inside a peak window of `tier`? */
export function inPeak(tier: PeakTier, time: number): boolean {
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return false;
  if (tier.weekdays && !tier.weekdays.includes(d.getUTCDay())) return false;
  const h = d.getUTCHours() + d.getUTCMinutes() / 60 + d.getUTCSeconds() / 3600 + d.getUTCMilliseconds() / 3_600_000;
  return tier.hoursUtc.some(([s, e]) => h >= s && h < e);
}

/** The cost of `usage` at `rates`, in the rates' currency. */
export function costAt(usage: TokenUsage, rates: TokenRates): number {
  const cw = usage.cacheWriteTokens ?? 0;
  return (
    (usage.inputTokens * rates.input +
      (usage.cacheReadTokens ?? 0) * rates.cacheRead +
      cw * (rates.cacheWrite ?? rates.input) +
      usage.outputTokens * rates.output) /
    1_000_000
  );
}

export interface PriceTableOptions {
  /** The config's `prices` section. */
  config?: Record<string, PriceEntry> | undefined;
  /** Include DeepSeek's published prices (default true). */
  defaults?: boolean;
}

/**
 * The rules for a set of calls: configured entries first (exact `provider:model`, then the bare
 * model name), then the defaults, then nothing.
 */
export class PriceTable {
  private readonly configured = new Map<string, PriceRule>();
  private readonly defaults: readonly PriceRule[];

  constructor(opts: PriceTableOptions = {}) {
    this.defaults = opts.defaults === false ? [] : DEEPSEEK_DEFAULT_PRICES;
    for (const [key, e] of Object.entries(opts.config ?? {})) {
      const rule: PriceRule = { models: [key], currency: e.currency ?? 'USD', rates: ratesOf(e), source: 'config' };
      if (e.peak)
        rule.peak = { hoursUtc: e.peak.hoursUtc, ...(e.peak.weekdays ? { weekdays: e.peak.weekdays } : {}), rates: ratesOf(e.peak.rates) };
      this.configured.set(key, rule);
    }
  }

  /** The rule that prices `call`, or why none does. */
  ruleFor(call: CallPoint): { rule: PriceRule } | { reason: 'no-model' | 'unknown-model' | 'no-price-at-time'; message: string } {
    const { provider, model, time } = call;
    if (model === undefined || model === '') return { reason: 'no-model', message: 'the call names no model' };
    const own = (provider !== undefined ? this.configured.get(`${provider}:${model}`) : undefined) ?? this.configured.get(model);
    if (own) return { rule: own };
    let named = false;
    for (const r of this.defaults) {
      if (!r.models.includes(model)) continue;
      if (r.providers && (provider === undefined || !r.providers.includes(provider))) continue;
      named = true;
      if ((r.from === undefined || time >= r.from) && (r.until === undefined || time < r.until)) return { rule: r };
    }
    const who = `${provider ?? '?'}:${model}`;
    if (named)
      return {
        reason: 'no-price-at-time',
        message: `no price for ${who} at ${isoOrRaw(time)} (the defaults start 2026-04-26); set one under "prices" in the config`,
      };
    return { reason: 'unknown-model', message: `no price for ${who}; set one under "prices" in the config` };
  }

  /** The cost of one call's usage, or why it has none. */
  price(usage: TokenUsage, call: CallPoint): Priced {
    const found = this.ruleFor(call);
    if (!('rule' in found)) return { priced: false, reason: found.reason, message: found.message };
    const rule = found.rule;
    const peak = rule.peak !== undefined && inPeak(rule.peak, call.time);
    const rates = peak ? rule.peak!.rates : rule.rates;
    return {
      priced: true,
      amount: costAt(usage, rates),
      currency: rule.currency,
      period: rule.peak === undefined ? 'flat' : peak ? 'peak' : 'off-peak',
      rates,
      rule,
    };
  }
}

function isoOrRaw(ms: number): string {
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`;
}
