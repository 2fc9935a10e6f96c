/**
 * Tool arguments against a zod schema, without importing zod: a schema object brings its own
 * `safeParse` and `toJSONSchema`, so the tool layer needs zod only where schemas are built (and
 * the start-up path, which builds none, never loads it).
 */
import type { ZodType } from 'zod';
import type { JsonObject } from '../model/json.js';

export type ArgsCheck = { ok: true; value: unknown } | { ok: false; error: string };

/** A zod schema (any zod 4 type), told apart from a `JsonSchemaParameters` record. */
export function isZodSchema(p: unknown): p is ZodType {
  return typeof p === 'object' && p !== null && '_zod' in p && typeof (p as { safeParse?: unknown }).safeParse === 'function';
}

/** Parse `args`; the failure lists every issue as `path: message`. */
export function zodCheck(schema: ZodType, args: unknown): ArgsCheck {
  const r = schema.safeParse(args);
  if (r.success) return { ok: true, value: r.data };
  const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  return { ok: false, error: issues.join('; ') };
}

/** The JSON Schema the model is shown for a zod schema (without `$schema`, which some providers reject). */
export function zodJsonSchema(schema: ZodType): JsonObject {
  const json = schema.toJSONSchema({ unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json as JsonObject;
}
