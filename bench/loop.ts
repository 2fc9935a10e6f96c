/**
 * Agent-loop overhead (issue 3 item 10). A zero-latency model (pre-built chunk arrays, no I/O)
 * and a no-op tool isolate what the harness itself costs per step: appends and validation,
 * inbox, request building and header checks, the invariant, the tool pipeline, async plumbing.
 *
 * 1. µs per step over a 100-step turn (median of repeated runs).
 * 2. A 10,000-step turn: the per-step cost around step 10,000 against around step 100, raw, and
 *    again with the one cost that must grow with history (the fresh array of all messages each
 *    request carries) taken out.
 */
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createAgent } from '../src/create-agent.js';
import type { LlmAdapter } from '../src/llm/adapter.js';
import type { StreamChunk } from '../src/model/stream.js';
import { textResponse, toolCallResponse } from '../src/llm/scripted.js';
import { benchArgs } from './args.js';

function zeroLatencyModel(steps: number): LlmAdapter {
  const call = toolCallResponse([{ id: 'c', name: 'noop', args: { n: 1 } }], { text: 'Working on it.' });
  const done = textResponse('All done.');
  let n = 0;
  return {
    providers: ['bench'],
    async *stream(): AsyncGenerator<StreamChunk> {
      n++;
      // Each call needs its own tool-call id: ids pair calls with results within a step.
      const chunks = n < steps ? call.map((c) => (c.type === 'tool-call-delta' || c.type === 'block-end' ? retag(c, `c${n}`) : c)) : done;
      yield* chunks;
    },
  };
}

function retag(c: StreamChunk, id: string): StreamChunk {
  if (c.type === 'tool-call-delta') return { ...c, id };
  if (c.type === 'block-end' && c.block.type === 'tool-call') return { ...c, block: { ...c.block, id } };
  return c;
}

const noop = {
  name: 'noop',
  description: 'Does nothing.',
  parameters: z.object({ n: z.number() }),
  isConcurrencySafe: () => true,
  execute: () => 'ok',
};

async function runTurn(steps: number, onStep?: (step: number, t: number) => void): Promise<{ ms: number; events: number }> {
  const agent = createAgent({
    model: 'bench:zero',
    adapters: zeroLatencyModel(steps),
    tools: [noop],
    system: 'You are a benchmark.',
    retry: false,
  });
  if (onStep)
    agent.session.subscribe((e) => {
      if (e.type === 'step/end') onStep(e.data.step, performance.now());
    });
  const t0 = performance.now();
  agent.prompt('go');
  await agent.whenIdle();
  const ms = performance.now() - t0;
  const end = agent.session.at(agent.session.length - 1);
  if (end?.type !== 'turn/end' || end.data.reason.kind !== 'completed')
    throw new Error(`bench turn did not complete: ${JSON.stringify(end)}`);
  return { ms, events: agent.session.length };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export interface LoopBenchResult {
  usPerStepAt100: number;
  eventsPerStep: number;
  usPerStepNear100: number;
  usPerStepNear10000: number;
  rawRatio: number;
  sharedHistoryUsNear100: number;
  sharedHistoryUsNear10000: number;
  adjustedRatio: number;
}

export async function runLoopBench(log: (line: string) => void = console.log): Promise<LoopBenchResult> {
  // Warm up the JIT on the whole path.
  for (let i = 0; i < 20; i++) await runTurn(100);
  const per: number[] = [];
  const steady: number[] = [];
  let events = 0;
  for (let i = 0; i < 30; i++) {
    const stamps: number[] = [];
    const r = await runTurn(100, (step, t) => void (stamps[step] = t));
    per.push((r.ms * 1000) / 100);
    for (let s = 2; s <= 100; s++) steady.push((stamps[s]! - stamps[s - 1]!) * 1000);
    events = r.events;
  }
  const usPerStepAt100 = median(per);
  log(`loop: steady-state step (median single step, GC pauses excluded): ${median(steady).toFixed(1)} µs`);
  log(
    `loop: harness overhead at 100 steps: ${usPerStepAt100.toFixed(1)} µs/step (whole turn ÷ 100, GC included, median of 30 ` +
      `turns; ${(events / 100).toFixed(1)} events/step; target < 500 µs)`,
  );

  const STEPS = 10_000;
  const stepCost = async (): Promise<{ near100: number; near10000: number }> => {
    const stamps = new Float64Array(STEPS + 1);
    await runTurn(STEPS, (step, t) => {
      stamps[step] = t;
    });
    // Median per-step time over 200-step windows: robust to a GC pause landing in a window.
    const windowUs = (from: number, to: number): number => {
      const d: number[] = [];
      for (let i = from + 1; i <= to; i++) d.push((stamps[i]! - stamps[i - 1]!) * 1000);
      return median(d);
    };
    return { near100: windowUs(1, 200), near10000: windowUs(9_800, 10_000) };
  };
  const normal = await stepCost();
  // The request's history is an O(1) snapshot (issue 13 item 4): no fresh array of all messages
  // per step any more, so nothing is switched off for a second run. (Before, a second run with
  // the projection's copy disabled gave the "without the fresh history array" ratio.)
  const shared = normal;
  const rawRatio = normal.near10000 / normal.near100;
  const adjustedRatio = shared.near10000 / shared.near100;
  log(
    `loop: 10,000-step turn: ${normal.near100.toFixed(1)} µs/step around step 100, ${normal.near10000.toFixed(1)} µs/step around ` +
      `step 10,000 → raw ratio ${rawRatio.toFixed(2)}×`,
  );
  log(
    `loop:   the same (the history is a snapshot, no fresh array to take out): ${shared.near100.toFixed(1)} → ` +
      `${shared.near10000.toFixed(1)} µs/step → ratio ${adjustedRatio.toFixed(2)}× (target ≤ 3×)`,
  );
  return {
    usPerStepAt100,
    eventsPerStep: events / 100,
    usPerStepNear100: normal.near100,
    usPerStepNear10000: normal.near10000,
    rawRatio,
    sharedHistoryUsNear100: shared.near100,
    sharedHistoryUsNear10000: shared.near10000,
    adjustedRatio,
  };
}

if (process.argv[1] && /bench[\\/]loop\.js$/.test(process.argv[1])) {
  const usage = `bench/loop.js: the agent loop's overhead per step, and step ~10,000 against step ~100

  node --expose-gc dist-bench/bench/loop.js

  -h, --help   this text
`;
  benchArgs(usage, {});
  console.log(`dsh agent-loop benchmark — node ${process.version}`);
  const r = await runLoopBench();
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  console.log('\nsummary');
  console.log(
    `harness overhead per step at 100 steps   ${r.usPerStepAt100.toFixed(1)} µs   target < 500 µs   ${verdict(r.usPerStepAt100 < 500)}`,
  );
  console.log(`step ~10,000 vs step ~100 (raw)          ${r.rawRatio.toFixed(2)}×`);
  console.log(
    `  without the fresh history array        ${r.adjustedRatio.toFixed(2)}×   target ≤ 3×       ${verdict(r.adjustedRatio <= 3)}`,
  );
}
