/** The `compaction` config section: defaults, refusals with the offending key, and the merge rule. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import {
  checkCompactionConfig,
  compactionConfigSchema,
  mergeCompactionConfig,
  resolvePolicy,
  retainBudget,
  CompactionError,
} from '../../src/compaction/index.js';

describe('the compaction config section', () => {
  it('fills in the defaults', () => {
    expect(resolvePolicy({})).toEqual({ auto: true, thresholdRatio: 0.8, retainRatio: 0.16, maxTokens: 8192, maxOverflowRetries: 1 });
    expect(resolvePolicy({ retainTokens: 2048, auto: false })).toEqual({
      auto: false,
      thresholdRatio: 0.8,
      retainTokens: 2048,
      maxTokens: 8192,
      maxOverflowRetries: 1,
    });
  });

  it('refuses contradictions and out-of-range values, naming the key', () => {
    const refuse = (c: unknown): string => {
      try {
        resolvePolicy(c as never);
      } catch (e) {
        expect(e).toBeInstanceOf(CompactionError);
        expect((e as CompactionError).code).toBe('INVALID_CONFIG');
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refuse({ retainRatio: 0.1, retainTokens: 100 })).toBe('compaction.retainTokens: give retainRatio or retainTokens, not both');
    expect(refuse({ thresholdRatio: 0.5, retainRatio: 0.6 })).toMatch(/^compaction\.retainRatio: retainRatio must be below thresholdRatio/);
    expect(refuse({ thresholdRatio: 0 })).toMatch(/^compaction\.thresholdRatio: /);
    expect(refuse({ maxTokens: 1.5 })).toMatch(/^compaction\.maxTokens: /);
    expect(refuse({ retainToken: 5 })).toMatch(/^compaction\.\(section\): .*retainToken/);
    expect(compactionConfigSchema.safeParse({ maxOverflowRetries: 0 }).success).toBe(true);
  });

  it('merges project over user, a retention choice replacing the other file’s', () => {
    expect(mergeCompactionConfig({ retainRatio: 0.1, maxTokens: 4000 }, { retainTokens: 900 })).toEqual({
      maxTokens: 4000,
      retainTokens: 900,
    });
    expect(mergeCompactionConfig({ retainTokens: 900, auto: true }, { auto: false })).toEqual({ retainTokens: 900, auto: false });
    expect(mergeCompactionConfig(undefined, { auto: false })).toEqual({ auto: false });
  });

  it('the retain budget is a share of the window or a fixed count', () => {
    expect(retainBudget(resolvePolicy({}), 100_000)).toBe(16_000);
    expect(retainBudget(resolvePolicy({}), undefined)).toBeUndefined();
    expect(retainBudget(resolvePolicy({ retainTokens: 700 }), undefined)).toBe(700);
  });

  it('the engine (no zod) and the config file (zod) give the verdict of the section rules in zod', () => {
    // The section's rules as zod states them: what checkCompactionConfig must agree with.
    const reference = z
      .strictObject({
        auto: z.boolean().optional(),
        thresholdRatio: z.number().gt(0).lte(1).optional(),
        retainRatio: z.number().gt(0).lt(1).optional(),
        retainTokens: z.number().int().positive().optional(),
        maxTokens: z.number().int().positive().optional(),
        maxOverflowRetries: z.number().int().nonnegative().optional(),
      })
      .refine((c) => !(c.retainRatio !== undefined && c.retainTokens !== undefined))
      .refine((c) => c.retainRatio === undefined || c.retainRatio < (c.thresholdRatio ?? 0.8));
    const value = fc.oneof(
      fc.boolean(),
      fc.constantFrom(0, 1, -1, 0.5, 0.8, 0.16, 1.5, 2, 100, 2 ** 53, Infinity, NaN, -0),
      fc.double(),
      fc.integer({ min: -5, max: 10_000 }),
      fc.string({ maxLength: 3 }),
      fc.constant(null),
    );
    const section = fc.dictionary(
      fc.constantFrom('auto', 'thresholdRatio', 'retainRatio', 'retainTokens', 'maxTokens', 'maxOverflowRetries', 'retainToken'),
      value,
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(section, (c) => {
        const expected = reference.safeParse(c).success;
        expect(checkCompactionConfig(c).length === 0).toBe(expected);
        expect(compactionConfigSchema.safeParse(c).success).toBe(expected);
        if (expected) expect(() => resolvePolicy(c)).not.toThrow();
        else expect(() => resolvePolicy(c)).toThrow(CompactionError);
      }),
      { numRuns: 2000 },
    );
  });
});
