/**
 * Decode+load timing probe, run in a fresh process by bench/main.ts so that the heap holds only
 * the file's text and what is being measured (the main bench process also holds the workload and
 * a million-event session, whose size taxes every allocation through the collector).
 *
 *   node --expose-gc dist-bench/bench/load-child.js FILE REPS
 *
 * Prints {base, ours} medians in ms: JSON.parse of each line (objects kept) against loadJsonl,
 * one warm-up each, then alternating runs with a GC before each.
 */
import { readFileSync } from 'node:fs';
import { loadJsonl } from '../src/session/index.js';
import { parseLines } from './parse-lines.js';

const [file, repsArg] = process.argv.slice(2);
const reps = Number(repsArg ?? 5);
const text = readFileSync(file!, 'utf8');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
let keep: unknown;

const fns: [() => unknown, number[]][] = [
  [() => parseLines(text), []],
  [() => loadJsonl(text).session, []],
];
for (const [fn] of fns) {
  keep = undefined;
  gc();
  keep = fn();
}
for (let r = 0; r < reps; r++) {
  for (const [fn, into] of fns) {
    keep = undefined;
    gc();
    const t0 = performance.now();
    keep = fn();
    into.push(performance.now() - t0);
  }
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
process.stdout.write(JSON.stringify({ base: median(fns[0]![1]), ours: median(fns[1]![1]), alive: keep !== undefined }));
