/**
 * The built-in tools' JSON Schemas are generated from their zod schemas (so start-up never loads
 * zod): the checked-in file must be exactly what zod produces now. After changing a schema in
 * src/tools/builtin/schemas.ts, regenerate it with
 *   npx vitest run test/tools/builtin-schemas.test.ts -u
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_SCHEMAS } from '../../src/tools/builtin/schemas.js';
import { BUILTIN_JSON_SCHEMAS } from '../../src/tools/builtin/json-schemas.js';
import { BUILTIN_TOOL_NAMES } from '../../src/tools/coding-tools.js';
import { builtinParameters } from '../../src/tools/builtin/parameters.js';

/** What the registry showed the model when it converted the zod schemas at start-up. */
function fromZod(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function render(): string {
  const entries = Object.entries(BUILTIN_SCHEMAS).map(([name, schema]) => `    ${name}: ${JSON.stringify(fromZod(schema))},`);
  return [
    '// Generated from schemas.ts by test/tools/builtin-schemas.test.ts; do not edit. After changing a',
    '// schema: npx vitest run test/tools/builtin-schemas.test.ts -u',
    "import type { JsonObject } from '../../model/json.js';",
    "import { freezeJsonInPlace } from '../../session/json.js';",
    '',
    `export type BuiltinSchemaName = ${Object.keys(BUILTIN_SCHEMAS)
      .map((n) => `'${n}'`)
      .join(' | ')};`,
    '',
    'export const BUILTIN_JSON_SCHEMAS: Readonly<Record<BuiltinSchemaName, JsonObject>> = freezeJsonInPlace(',
    '  {',
    ...entries,
    '  },',
    "  { eventType: 'tool schema', path: '$' },",
    ');',
    '',
  ].join('\n');
}

describe('built-in tool schemas', () => {
  it('the generated JSON Schemas are what zod makes of schemas.ts', async () => {
    await expect(render()).toMatchFileSnapshot('../../src/tools/builtin/json-schemas.ts');
    for (const [name, schema] of Object.entries(BUILTIN_SCHEMAS))
      expect(BUILTIN_JSON_SCHEMAS[name as keyof typeof BUILTIN_SCHEMAS]).toEqual(fromZod(schema));
  });

  it('every built-in tool has one, and nothing else does', () => {
    expect(Object.keys(BUILTIN_SCHEMAS).sort()).toEqual([...BUILTIN_TOOL_NAMES].sort());
  });

  it('validation loads the zod schema and reports every issue with its path', async () => {
    const p = builtinParameters('edit');
    expect(await p.validate!({ file_path: 'a', old_string: 'x', new_string: 'y' })).toEqual({
      ok: true,
      value: { file_path: 'a', old_string: 'x', new_string: 'y' },
    });
    const bad = await p.validate!({ file_path: 3, old_string: '' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^file_path: .*; old_string: .*; new_string: /);
    const todo = await builtinParameters('todo_write').validate!({ todos: [{ content: 'a', status: 'later' }] });
    expect(!todo.ok && todo.error).toMatch(/^todos\.0\.status: /);
  });
});
