/**
 * The compaction policy the engine runs with: the config section's values checked, merged and
 * given their defaults. No zod here (the engine is built at every agent start, and zod is a
 * large import): `checkCompactionConfig` states the section's rules once, and the config file's
 * zod schema (`config.ts`) applies the same function, so a file and code see the same verdict.
 */
import { CompactionError } from './errors.js';

/** The `compaction` section of the config file. */
export interface CompactionConfig {
  /** Compact automatically under pressure and on context overflow (default true). */
  auto?: boolean | undefined;
  /** Compact before a step when the request would fill this share of the window (default 0.8). */
  thresholdRatio?: number | undefined;
  /** Recent history kept verbatim, as a share of the window (default 0.16). */
  retainRatio?: number | undefined;
  /** Recent history kept verbatim, in tokens (instead of `retainRatio`). */
  retainTokens?: number | undefined;
  /** Output cap of the summariser's call (default 8192). */
  maxTokens?: number | undefined;
  /** Retries of one step after compacting on CONTEXT_WINDOW_EXCEEDED (default 1; 0 disables overflow recovery). */
  maxOverflowRetries?: number | undefined;
}

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

export interface ConfigIssue {
  /** Key path inside the section ([] for the section itself). */
  path: string[];
  message: string;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Each key's rule: what it must be, as the message says it. */
const FIELDS: Record<keyof CompactionConfig, { ok: (v: unknown) => boolean; expected: string }> = {
  auto: { ok: (v) => typeof v === 'boolean', expected: 'a boolean' },
  thresholdRatio: { ok: (v) => isNumber(v) && v > 0 && v <= 1, expected: 'a number above 0 and at most 1' },
  retainRatio: { ok: (v) => isNumber(v) && v > 0 && v < 1, expected: 'a number above 0 and below 1' },
  retainTokens: { ok: (v) => Number.isSafeInteger(v) && (v as number) > 0, expected: 'a positive integer' },
  maxTokens: { ok: (v) => Number.isSafeInteger(v) && (v as number) > 0, expected: 'a positive integer' },
  maxOverflowRetries: { ok: (v) => Number.isSafeInteger(v) && (v as number) >= 0, expected: 'a non-negative integer' },
};

/** Every rule the section breaks, in key order (an absent key, or one set to undefined, is unset). */
export function checkCompactionConfig(c: unknown): ConfigIssue[] {
  if (typeof c !== 'object' || c === null || Array.isArray(c))
    return [{ path: [], message: `expected an object, got ${c === null ? 'null' : Array.isArray(c) ? 'an array' : typeof c}` }];
  const issues: ConfigIssue[] = [];
  const rec = c as Record<string, unknown>;
  const unknown = Object.keys(rec).filter((k) => !Object.hasOwn(FIELDS, k));
  if (unknown.length > 0)
    issues.push({
      path: [],
      message: `unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((k) => JSON.stringify(k)).join(', ')}`,
    });
  for (const [key, rule] of Object.entries(FIELDS)) {
    const v = rec[key];
    if (v !== undefined && !rule.ok(v)) issues.push({ path: [key], message: `must be ${rule.expected}` });
  }
  if (issues.length > 0) return issues;
  const s = c as CompactionConfig;
  if (s.retainRatio !== undefined && s.retainTokens !== undefined)
    issues.push({ path: ['retainTokens'], message: 'give retainRatio or retainTokens, not both' });
  if (s.retainRatio !== undefined && s.retainRatio >= (s.thresholdRatio ?? DEFAULTS.thresholdRatio)) {
    issues.push({ path: ['retainRatio'], message: 'retainRatio must be below thresholdRatio, or every compaction would trigger the next' });
  }
  return issues;
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
  const issue = checkCompactionConfig(config)[0];
  if (issue) throw new CompactionError('INVALID_CONFIG', `compaction.${issue.path.join('.') || '(section)'}: ${issue.message}`);
  const c = config;
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
