/**
 * The built-in tools' parameters: the model is shown the JSON Schema generated from their zod
 * schemas (`json-schemas.ts`), and the zod schemas themselves (with zod) are loaded by the first
 * call's validation, not at start-up.
 */
import type { JsonSchemaParameters } from '../types.js';
import { zodCheck } from '../zod-check.js';
import { BUILTIN_JSON_SCHEMAS, type BuiltinSchemaName } from './json-schemas.js';

let loading: Promise<typeof import('./schemas.js')> | undefined;

/** The zod schemas module, imported once. */
export function loadBuiltinSchemas(): Promise<typeof import('./schemas.js')> {
  return (loading ??= import('./schemas.js'));
}

export function builtinParameters(name: BuiltinSchemaName): JsonSchemaParameters {
  return {
    jsonSchema: BUILTIN_JSON_SCHEMAS[name],
    validate: async (args) => zodCheck((await loadBuiltinSchemas()).BUILTIN_SCHEMAS[name], args),
  };
}
