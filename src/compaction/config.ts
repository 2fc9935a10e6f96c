/**
 * The `compaction` section of the config file, and the resolved policy the engine runs with.
 *
 *   "compaction": { "auto": true, "thresholdRatio": 0.8, "retainRatio": 0.16, "maxTokens": 8192 }
 *
 * `retainRatio` and `retainTokens` are two ways to say how much recent history stays verbatim;
 * give one. A retained tail at or above the threshold would compact again at once, so it must
 * stay below it.
 */
import { z } from 'zod';
import { CompactionError } from './errors.js';

export const compactionConfigSchema = z
  .strictObject({
    /** Compact automatically under pressure and on context overflow (default true). */
    auto: z.boolean().optional(),
    /** Compact before a step when the request would fill this share of the window (default 0.8). */
    thresholdRatio: z.number().gt(0).lte(1).optional(),
    /** Recent history kept verbatim, as a share of the window (default 0.16). */
    retainRatio: z.number().gt(0).lt(1).optional(),
    /** Recent history kept verbatim, in tokens (instead of `retainRatio`). */
    retainTokens: z.number().int().positive().optional(),
    /** Output cap of the summariser's call (default 8192). */
    maxTokens: z.number().int().positive().optional(),
    /** Retries of one step after compacting on CONTEXT_WINDOW_EXCEEDED (default 1; 0 disables overflow recovery). */
    maxOverflowRetries: z.number().int().nonnegative().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.retainRatio !== undefined && c.retainTokens !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['retainTokens'], message: 'give retainRatio or retainTokens, not both' });
    }
    if (c.retainRatio !== undefined && c.retainRatio >= (c.thresholdRatio ?? DEFAULTS.thresholdRatio)) {
      ctx.addIssue({
        code: 'custom',
        path: ['retainRatio'],
        message: 'retainRatio must be below thresholdRatio, or every compaction would trigger the next',
      });
    }
  });

export type CompactionConfig = z.infer<typeof compactionConfigSchema>;

/** Spread into the config file's shape: `{ ...configShape, ...compactionConfigShape }`. */
export const compactionConfigShape = { compaction: compactionConfigSchema.optional() };

export const DEFAULTS = Object.freeze({
  auto: true,
  thresholdRatio: 0.8,
  retainRatio: 0.16,
  maxTokens: 8192,
  maxOverflowRetries: 1,
});

export interface CompactionPolicy {
  auto: boolean;
  thresholdRatio: number;
  /** Exactly one of the two retention forms is set. */
  retainRatio?: number;
  retainTokens?: number;
  maxTokens: number;
  maxOverflowRetries: number;
}

/**
 * Project over user, like the other sections, except retention: a file that names either form
 * replaces the other file's choice, so the merge never holds both.
 */
export function mergeCompactionConfig(
  base: CompactionConfig | undefined,
  over: CompactionConfig | undefined,
): CompactionConfig | undefined {
  if (!base) return over;
  if (!over) return base;
  const out: CompactionConfig = { ...base, ...over };
  if (over.retainRatio !== undefined || over.retainTokens !== undefined) {
    delete out.retainRatio;
    delete out.retainTokens;
    if (over.retainRatio !== undefined) out.retainRatio = over.retainRatio;
    if (over.retainTokens !== undefined) out.retainTokens = over.retainTokens;
  }
  return out;
}

/** Defaults filled in; an invalid combination is refused with `INVALID_CONFIG`. */
export function resolvePolicy(config: CompactionConfig = {}): CompactionPolicy {
  const parsed = compactionConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CompactionError('INVALID_CONFIG', `compaction.${issue.path.join('.') || '(section)'}: ${issue.message}`);
  }
  const c = parsed.data;
  const policy: CompactionPolicy = {
    auto: c.auto ?? DEFAULTS.auto,
    thresholdRatio: c.thresholdRatio ?? DEFAULTS.thresholdRatio,
    maxTokens: c.maxTokens ?? DEFAULTS.maxTokens,
    maxOverflowRetries: c.maxOverflowRetries ?? DEFAULTS.maxOverflowRetries,
  };
  if (c.retainTokens !== undefined) policy.retainTokens = c.retainTokens;
  else policy.retainRatio = c.retainRatio ?? DEFAULTS.retainRatio;
  return policy;
}

/** The verbatim tail budget for a window; undefined when it depends on a window nobody knows. */
export function retainBudget(policy: CompactionPolicy, contextWindow: number | undefined): number | undefined {
  if (policy.retainTokens !== undefined) return policy.retainTokens;
  return contextWindow === undefined ? undefined : Math.floor(contextWindow * (policy.retainRatio ?? DEFAULTS.retainRatio));
}
