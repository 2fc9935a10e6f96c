/** The public API: createAgent and the README's example (issue 3 item 8). */
import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { createAgent } from '../../src/create-agent.js';
import { loadJsonl } from '../../src/session/index.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';
import { ModelSelectionError } from '../../src/llm/select.js';
import { main } from '../../examples/agent-quickstart.js';
import { repoRoot } from '../support/shared.js';

describe('createAgent', () => {
  it('creates the adapter for a known provider from the environment, and names the missing key', () => {
    const saved = process.env.DEEPSEEK_API_KEY;
    try {
      delete process.env.DEEPSEEK_API_KEY;
      expect(() => createAgent({ model: 'deepseek-v4-flash' })).toThrow(/^DEEPSEEK_API_KEY is not set/);
      process.env.DEEPSEEK_API_KEY = 'sk-test';
      const agent = createAgent({ model: 'deepseek-v4-flash' });
      expect(agent.adapters.providers()).toEqual(['deepseek']);
      expect([agent.options.provider, agent.options.model]).toEqual(['deepseek', 'deepseek-v4-flash']);
      const anthropic = (() => {
        const saved2 = process.env.ANTHROPIC_API_KEY;
        delete process.env.ANTHROPIC_API_KEY;
        try {
          return () => createAgent({ model: 'anthropic:claude-sonnet-4-5' });
        } finally {
          if (saved2 !== undefined) process.env.ANTHROPIC_API_KEY = saved2;
        }
      })();
      if (!process.env.ANTHROPIC_API_KEY) expect(anthropic).toThrow(/ANTHROPIC_API_KEY/);
    } finally {
      if (saved === undefined) delete process.env.DEEPSEEK_API_KEY;
      else process.env.DEEPSEEK_API_KEY = saved;
    }
  });

  it('a bare model name beside a passed-in adapter, with no DeepSeek key: the error names the prefix to write', () => {
    const saved = process.env.DEEPSEEK_API_KEY;
    try {
      delete process.env.DEEPSEEK_API_KEY;
      let err: unknown;
      try {
        createAgent({ model: 'demo', adapters: new ScriptedAdapter([]) });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ModelSelectionError);
      expect((err as ModelSelectionError).code).toBe('NO_ADAPTER');
      expect((err as Error).message).toContain('model "demo" has no provider prefix, so it goes to deepseek');
      expect((err as Error).message).toContain('DEEPSEEK_API_KEY is not set');
      expect((err as Error).message).toContain('"scripted:demo"');
      // With the prefix it works, and without an adapter the plain missing-key error stays.
      expect(createAgent({ model: 'scripted:demo', adapters: new ScriptedAdapter([]) }).options.provider).toBe('scripted');
      expect(() => createAgent({ model: 'demo' })).toThrow(/^DEEPSEEK_API_KEY is not set/);
    } finally {
      if (saved === undefined) delete process.env.DEEPSEEK_API_KEY;
      else process.env.DEEPSEEK_API_KEY = saved;
    }
  });

  it('leaves a custom provider to the adapters given', () => {
    const agent = createAgent({ model: 'my-gateway:model-x' });
    expect(agent.adapters.providers()).toEqual([]);
    expect(agent.options.provider).toBe('my-gateway');
  });
});

describe('the README example', () => {
  it('is the file the README shows, and it runs: tool call, answer, a valid log', async () => {
    const readme = readFileSync(`${repoRoot}/README.md`, 'utf8');
    const example = readFileSync(`${repoRoot}/examples/agent-quickstart.ts`, 'utf8');
    const body = example.slice(example.indexOf('import { z }'), example.indexOf('if (process.argv[1]'));
    expect(readme).toContain(body.trim());
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    let jsonl: string;
    try {
      jsonl = await main();
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([
      '[status] running',
      '[log] tool/call word_count {"text":"the quick brown fox"}',
      '[status] idle',
      'user: How many words are in "the quick brown fox"?',
      'assistant: Let me count. → word_count({"text":"the quick brown fox"})',
      'user: ← [{"type":"text","text":"4"}]',
      'assistant: The text has 4 words.',
    ]);
    const loaded = loadJsonl(jsonl);
    expect(loaded.session.deriveMessages().toArray()).toHaveLength(4);
  });
});
