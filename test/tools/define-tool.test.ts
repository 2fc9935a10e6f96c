/** defineTool: a tool's argument type inferred from its zod schema, checked at compile time and run time. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../src/tools/types.js';
import { agentFor, call, tempDir, text } from './helpers.js';

describe('defineTool', () => {
  const seen: unknown[] = [];
  const greet = defineTool({
    name: 'greet',
    description: 'Greet someone, loudly or not.',
    parameters: z.object({ name: z.string().min(1), loud: z.boolean().default(false) }),
    execute(args) {
      // The parsed output type: `loud` is a boolean here even when the model left it out.
      expectTypeOf(args).toEqualTypeOf<{ name: string; loud: boolean }>();
      // @ts-expect-error a property the schema does not declare is a compile error
      void args.nmae;
      seen.push(args);
      return args.loud ? `HELLO ${args.name.toUpperCase()}` : `hello ${args.name}`;
    },
    isConcurrencySafe: (args) => args.name.length > 0,
    permission: { effects: 'none', subject: (args) => ({ kind: 'command', value: args.name }) },
  });

  it('is the definition itself, typed by the schema', () => {
    expectTypeOf(greet).toEqualTypeOf<ToolDefinition<{ name: string; loud: boolean }>>();
    expect(greet.name).toBe('greet');
    expect(greet.isConcurrencySafe!({ name: 'a', loud: false })).toBe(true);
  });

  it('runs through the pipeline: defaults applied before execute, bad arguments refused', async () => {
    const agent = agentFor(tempDir(), [(host) => host.tool(greet)]);
    seen.length = 0;
    const ok = await call(agent, 'greet', { name: 'ada' });
    expect(ok.isError).toBeFalsy();
    expect(text(ok)).toBe('hello ada');
    expect(seen).toEqual([{ name: 'ada', loud: false }]);
    const bad = await call(agent, 'greet', { name: '' });
    expect(bad.isError).toBe(true);
    expect(bad.error?.code).toBe('INVALID_ARGS');
    expect(seen).toHaveLength(1);
  });
});
