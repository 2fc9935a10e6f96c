/**
 * One model choice (issue 12 item 3): `chooseModel` resolves provider, model, route and adapter
 * from spec, environment and config, once; the agent, the coding preset and the CLI take the
 * choice as it is instead of choosing again.
 */
import { describe, expect, it } from 'vitest';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import { ChatCompletionsAdapter } from '../../src/llm/openai-compatible.js';
import { LlmConfigSchema } from '../../src/llm/config.js';
import { ScriptedAdapter, textResponse } from '../../src/llm/scripted.js';
import { MissingCredentialError, ModelSelectionError, chooseModel, modelSource } from '../../src/llm/select.js';
import { isModelChoice, type ModelChoice } from '../../src/llm/model-choice.js';
import { assembleAgent } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { createCodingAgent } from '../../src/coding/agent.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const config = LlmConfigSchema.parse({ model: 'anthropic:claude-opus-5', providers: { ollama: { baseUrl: 'http://127.0.0.1:11434/v1' } } });

describe('chooseModel', () => {
  it('takes the spec, else DSH_MODEL, else the config file, else the default, and says which', () => {
    const pick = (spec: string | undefined, env: Record<string, string>) => {
      const c = chooseModel({ spec, env, config: spec === 'nocfg' ? undefined : config });
      return [c.config.provider, c.config.model, c.from];
    };
    expect(pick('openai:gpt-4.1', { DSH_MODEL: 'deepseek-chat' })).toEqual(['openai', 'gpt-4.1', 'argument']);
    expect(pick(undefined, { DSH_MODEL: 'deepseek-chat' })).toEqual(['deepseek', 'deepseek-chat', 'DSH_MODEL']);
    expect(pick(undefined, { DSH_MODEL: '  ' })).toEqual(['anthropic', 'claude-opus-5', 'config file']);
    expect(chooseModel({ env: {} }).from).toBe('default');
    expect(chooseModel({ env: {} }).config).toEqual({ provider: 'deepseek', model: 'deepseek-v4-flash' });
    expect(modelSource({ env: { DSH_MODEL: 'x' }, config })).toBe('DSH_MODEL');
  });

  it('resolves route and adapter on first use, once: reporting the choice needs no key', () => {
    const c = chooseModel({ spec: 'deepseek:deepseek-v4-pro', env: {} });
    expect(c.config).toEqual({ provider: 'deepseek', model: 'deepseek-v4-pro' });
    expect(() => c.route()).toThrow(MissingCredentialError);
    expect(() => c.adapter()).toThrow(/^DEEPSEEK_API_KEY is not set/);

    const ok = chooseModel({ spec: 'deepseek:deepseek-v4-pro', env: { DEEPSEEK_API_KEY: 'sk-x' } });
    const a = ok.adapter();
    expect(a).toBeInstanceOf(DeepSeekAdapter);
    expect(ok.adapter()).toBe(a);
    expect(ok.route()).toMatchObject({ name: 'deepseek', apiKey: 'sk-x' });
    expect(chooseModel({ spec: 'ollama:qwen3:8b', env: {}, config }).adapter()).toBeInstanceOf(ChatCompletionsAdapter);
  });

  it('uses an adapter passed in that serves the provider, and makes none (no key needed)', () => {
    const given = new ScriptedAdapter([], { providers: ['deepseek'] });
    const c = chooseModel({ spec: 'deepseek-v4-flash', env: {}, adapters: [given] });
    expect(c.adapter()).toBe(given);
  });

  it('refuses an unknown prefix by CLI rules, and leaves it to passed-in adapters by library rules', () => {
    expect(() => chooseModel({ spec: 'qwen3:8b', env: {} })).toThrow(ModelSelectionError);
    const lib = chooseModel({ spec: 'qwen3:8b', env: {}, customRoutes: true });
    expect(lib.config).toEqual({ provider: 'qwen3', model: '8b' });
    expect(lib.route()).toBeUndefined();
    expect(lib.adapter()).toBeUndefined();
  });

  it('by library rules, names the prefix to write when a bare name meets passed-in adapters and no key', () => {
    const given = new ScriptedAdapter([], { providers: ['scripted'] });
    const c = chooseModel({ spec: 'demo', env: {}, adapters: [given], customRoutes: true });
    expect(() => c.adapter()).toThrow(/has no provider prefix.*"scripted:demo"/);
    // By CLI rules the plain missing-key error stays.
    expect(() => chooseModel({ spec: 'demo', env: {}, adapters: [given] }).adapter()).toThrow(/^DEEPSEEK_API_KEY is not set/);
  });

  it('keeps a call configuration given as the spec', () => {
    const c = chooseModel({ spec: { provider: 'deepseek', model: 'm', temperature: 0.5 }, env: {} });
    expect(c.config).toEqual({ provider: 'deepseek', model: 'm', temperature: 0.5 });
    expect(isModelChoice(c)).toBe(true);
    expect(isModelChoice(c.config)).toBe(false);
  });
});

describe('the choice, passed down', () => {
  /** A choice whose adapter is counted: whoever uses it must not choose again. */
  function counted(provider: string, model: string): { choice: ModelChoice; calls: () => number; adapter: ScriptedAdapter } {
    const adapter = new ScriptedAdapter([textResponse('ok')], { providers: [provider] });
    let n = 0;
    const choice: ModelChoice = { config: { provider, model }, from: 'argument', route: () => undefined, adapter: () => (n++, adapter) };
    return { choice, calls: () => n, adapter };
  }

  it('assembleAgent registers the choice’s adapter when nothing else serves its provider, and never asks otherwise', () => {
    const a = counted('deepseek', 'deepseek-v4-flash');
    const agent = assembleAgent({ model: a.choice });
    expect(agent.adapters.get('deepseek')).toBe(a.adapter);
    expect([agent.options.provider, agent.options.model]).toEqual(['deepseek', 'deepseek-v4-flash']);
    expect(a.calls()).toBe(1);

    const b = counted('deepseek', 'deepseek-v4-flash');
    const own = new ScriptedAdapter([], { providers: ['deepseek'] });
    const served = assembleAgent({ model: b.choice, plugins: [(host) => host.adapter(own)] });
    expect(served.adapters.get('deepseek')).toBe(own);
    expect(b.calls()).toBe(0);
  });

  it('createAgent and createCodingAgent take a choice as it is', async () => {
    const a = counted('deepseek', 'deepseek-v4-pro');
    const agent = createAgent({ model: a.choice });
    expect(agent.adapters.get('deepseek')).toBe(a.adapter);
    const b = counted('anthropic', 'claude-opus-5');
    const cwd = mkdtempSync(join(tmpdir(), 'dsh-choice-'));
    try {
      // The config file names another model; the choice wins, untouched.
      const coding = await createCodingAgent({
        cwd,
        config: { model: 'deepseek:deepseek-chat' },
        model: b.choice,
        mcp: false,
        reasoningEffort: 'low',
      });
      expect([coding.agent.options.provider, coding.agent.options.model, coding.agent.options.reasoningEffort]).toEqual([
        'anthropic',
        'claude-opus-5',
        'low',
      ]);
      expect(coding.agent.adapters.get('anthropic')).toBe(b.adapter);
      expect(b.calls()).toBe(1);
      await coding.close();
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
