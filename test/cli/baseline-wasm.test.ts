/**
 * The commands that talk to a model have V8 compile WebAssembly (Node's fetch's HTTP parser) with
 * its baseline compiler (src/cli/baseline-wasm.ts); the set must name exactly the commands that
 * can reach a model's API: those that take a model (`--model`) at the top level.
 */
import { describe, expect, it } from 'vitest';
import { MODEL_COMMANDS } from '../../src/cli/baseline-wasm.js';
import { buildProgram } from '../../src/cli/main.js';
import { Output } from '../../src/cli/output.js';

describe('the commands that prefer baseline WebAssembly', () => {
  it('are the top-level commands that take a model', () => {
    const sink = new Output({ write: () => true }, false);
    const program = buildProgram({ out: sink, err: sink, env: {} }, () => {});
    const takeModel = program.commands.filter((c) => c.options.some((o) => o.long === '--model')).map((c) => c.name());
    expect(takeModel.length).toBeGreaterThan(0);
    expect([...MODEL_COMMANDS].sort()).toEqual(takeModel.sort());
  });
});
