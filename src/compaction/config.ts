/**
 * The `compaction` section of the config file, as a zod schema for the config file's composed
 * schema. Its rules are `checkCompactionConfig`'s (`policy.ts`), which the engine applies without
 * zod; the schema reports them with their paths.
 *
 *   "compaction": { "auto": true, "thresholdRatio": 0.8, "retainRatio": 0.16, "maxTokens": 8192 }
 *
 * `retainRatio` and `retainTokens` are two ways to say how much recent history stays verbatim;
 * give one. A retained tail at or above the threshold would compact again at once, so it must
 * stay below it.
 */
import { z } from 'zod';
import { checkCompactionConfig, type CompactionConfig } from './policy.js';

export const compactionConfigSchema = z.custom<CompactionConfig>().superRefine((c, ctx) => {
  for (const issue of checkCompactionConfig(c)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
});

/** Spread into the config file's shape: `{ ...configShape, ...compactionConfigShape }`. */
export const compactionConfigShape = { compaction: compactionConfigSchema.optional() };

export { DEFAULTS, mergeCompactionConfig, resolvePolicy, retainBudget, type CompactionConfig, type CompactionPolicy } from './policy.js';
