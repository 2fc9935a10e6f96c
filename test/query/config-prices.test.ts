/** The config's `prices` section: validated with its JSON path, merged by model, project over user. */
import { describe, expect, it } from 'vitest';
import { ConfigError, mergeConfig, parseConfig } from '../../src/config/index.js';

describe('prices in the config', () => {
  it('are accepted, and merge by model with the later file winning', async () => {
    const user = await parseConfig(JSON.stringify({ prices: { a: { input: 1, output: 2 }, b: { input: 1, output: 1 } } }), 'user.json');
    const project = await parseConfig(JSON.stringify({ prices: { b: { input: 5, output: 5, currency: 'EUR' } } }), 'project.json');
    expect(mergeConfig(user, project).prices).toEqual({ a: { input: 1, output: 2 }, b: { input: 5, output: 5, currency: 'EUR' } });
  });

  it('are refused with the JSON path of a bad value', async () => {
    let err: unknown;
    try {
      await parseConfig(JSON.stringify({ prices: { 'deepseek:x': { input: 'cheap', output: 1 } } }), 'c.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).path).toBe('$.prices["deepseek:x"].input');
  });
});
