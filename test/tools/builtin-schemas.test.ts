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

const WIDTH = 140;

/** A JSON string as a TypeScript literal, split into `'…' +` pieces that fit the line limit. */
function stringLiteral(v: string, indent: string, room: number): string {
  const quote = (t: string): string => JSON.stringify(t);
  if (quote(v).length <= room) return quote(v);
  const max = WIDTH - indent.length - 6;
  const pieces: string[] = [];
  let rest = v;
  while (rest.length > 0) {
    let n = Math.min(rest.length, max);
    // JSON escapes make a piece longer than its characters: shrink until it fits.
    while (quote(rest.slice(0, n)).length > max) n--;
    const space = rest.lastIndexOf(' ', n);
    if (n < rest.length && space > n / 2) n = space + 1;
    pieces.push(quote(rest.slice(0, n)));
    rest = rest.slice(n);
  }
  return `\n${indent}  ${pieces.join(` +\n${indent}  `)}`;
}

/** A JSON value as a TypeScript literal laid out within the line limit (the file is not formatted by Biome). */
function literal(v: unknown, indent: string, room: number): string {
  if (typeof v === 'string') return stringLiteral(v, indent, room);
  const flat = JSON.stringify(v);
  if (flat.length <= room || v === null || typeof v !== 'object') return flat;
  const inner = `${indent}  `;
  if (Array.isArray(v)) return `[\n${v.map((x) => `${inner}${literal(x, inner, WIDTH - inner.length - 1)},`).join('\n')}\n${indent}]`;
  const rows = Object.entries(v as Record<string, unknown>).map(([k, x]) => {
    const key = `${JSON.stringify(k)}: `;
    return `${inner}${key}${literal(x, inner, WIDTH - inner.length - key.length - 1)},`;
  });
  return `{\n${rows.join('\n')}\n${indent}}`;
}

function render(): string {
  const entries = Object.entries(BUILTIN_SCHEMAS).map(
    ([name, schema]) => `    ${name}: ${literal(fromZod(schema), '    ', WIDTH - name.length - 7)},`,
  );
  return [
    '// Generated from schemas.ts by test/tools/builtin-schemas.test.ts; do not edit. After changing a',
    '// schema: npx vitest run test/tools/builtin-schemas.test.ts -u',
    "import type { JsonObject } from '../../model/json.js';",
    "import { freezeJsonInPlace } from '../../session/json.js';",
    '',
    'export type BuiltinSchemaName =',
    ...Object.keys(BUILTIN_SCHEMAS).map((n, i, all) => `  | '${n}'${i === all.length - 1 ? ';' : ''}`),
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
    // The minimal set's two tools: its `bash` has its own schema under another key.
    expect(Object.keys(BUILTIN_SCHEMAS).sort()).toEqual([...BUILTIN_TOOL_NAMES, 'persistent_bash', 'str_replace_editor'].sort());
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
