/**
 * The config file's `prices` section (zod): its own module so that reading prices (`PriceTable`,
 * which `dsh log check --alerts` and `dsh log stats` use) does not load zod; only the config
 * file's validation does.
 */
import { z } from 'zod';

const rate = z.number().finite().nonnegative();
const RatesSchema = z.strictObject({ input: rate, cacheRead: rate.optional(), cacheWrite: rate.optional(), output: rate });
const hour = z.number().int().min(0).max(24);

/** One model's prices in the config: rates, and optionally a peak tier. */
export const PriceEntrySchema = z.strictObject({
  input: rate,
  /** Absent: cache reads are charged as input. */
  cacheRead: rate.optional(),
  cacheWrite: rate.optional(),
  output: rate,
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be a three-letter currency code such as USD')
    .optional(),
  peak: z
    .strictObject({
      hoursUtc: z.array(z.tuple([hour, hour]).refine(([s, e]) => s < e, 'a window must end after it starts')).min(1),
      weekdays: z.array(z.number().int().min(0).max(6)).min(1).optional(),
      rates: RatesSchema,
    })
    .optional(),
});
export type PriceEntry = z.infer<typeof PriceEntrySchema>;

/**
 * `prices` in the config file: keyed by model name (`deepseek-flash`) or `provider:model`
 * (`openrouter:deepseek/deepseek-chat`, which wins over the bare name). A configured entry
 * replaces the defaults for that model at all times.
 */
export const pricesConfigShape = {
  prices: z.record(z.string().min(1), PriceEntrySchema).optional(),
};
