/**
 * Terminal rendering of a streamed answer (issue 15 item 8): the cost of one chunk pushed into a
 * `MarkdownStream` early in an answer (from chunk 100) and late in it (from chunk 10,000). Only
 * the last open block is laid out again per chunk, so the two must be about equal (target: the
 * late/early ratio at most 2). The same-run baseline is the naive way, the whole answer so far
 * rendered again for each chunk (`renderMarkdown` of the prefix), at the same two points: its
 * ratio shows what the stream avoids.
 *
 * The answer repeats one cycle of blocks (heading, paragraphs with inline styles and wide text, a
 * list, a fenced TypeScript block, a table, a quote) cut into 5-character chunks; each window is
 * one whole cycle of chunks, so both windows meet the same blocks in the same order.
 *
 *   node dist-bench/bench/render.js [--reps N] [--width W]
 */
import { parseArgs } from 'node:util';
import { MarkdownStream, renderMarkdown } from '../src/terminal/render/markdown.js';

const { values: args } = parseArgs({ options: { reps: { type: 'string' }, width: { type: 'string' } } });
const REPS = Number(args.reps ?? 5);
const WIDTH = Number(args.width ?? 100);
const CHUNK = 5;
const EARLY = 100;
const LATE = 10_000;

const CYCLE_BLOCKS = [
  '## Step {n}: what changed',
  'The parser now keeps **every** token it reads, so `deriveMessages()` can rebuild the history from the log ' +
    'alone; see [the design note](https://example.com/design) for why. 日本語のテキストも含まれます 😀 and a long ' +
    'tail of ordinary words to make the paragraph wrap over several lines of the terminal at its width.',
  '- first item with `code`\n- second item, *emphasised*\n  - nested under it\n- [x] a finished task',
  '```ts\nexport function fold(events: readonly Event[]): State {\n  let s = initial();\n  for (const e of events) {\n' +
    '    // each event moves the state on\n    s = step(s, e);\n  }\n  return s;\n}\n```',
  '| file | lines | note |\n|:--|--:|:--|\n| src/a.ts | 120 | parser |\n| src/b.ts | 48 | 表 |\n| src/c.ts | 7 | tiny |',
  '> A quoted remark that runs on for a while so that it wraps, with **bold** inside.',
];

/** One cycle's text, padded with spaces to a whole number of chunks. */
function cycle(n: number): string {
  const text = `${CYCLE_BLOCKS.join('\n\n').replace('{n}', String(n % 10))}\n\n`;
  const rem = text.length % CHUNK;
  return rem === 0 ? text : `${text.slice(0, -1)}${' '.repeat(CHUNK - rem)}\n`;
}

const cycleChunks = cycle(0).length / CHUNK;
const totalChunks = LATE + 2 * cycleChunks;
let answer = '';
for (let i = 0; answer.length < totalChunks * CHUNK; i++) answer += cycle(i);
const chunks: string[] = [];
for (let i = 0; i < totalChunks; i++) chunks.push(answer.slice(i * CHUNK, (i + 1) * CHUNK));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
/** CPU time of this process in µs. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Mean µs of CPU time per chunk over the windows [EARLY, EARLY+cycle) and [LATE, LATE+cycle),
 * streaming. CPU time of this process (user + system), not wall time: other work on a shared
 * machine then adds little.
 */
function streamRun(): { early: number; late: number } {
  const s = new MarkdownStream({ width: WIDTH, color: true });
  let early = 0;
  let late = 0;
  let t0 = 0;
  for (let i = 0; i < chunks.length; i++) {
    if (i === EARLY || i === LATE) t0 = cpu();
    s.push(chunks[i]!);
    if (i === EARLY + cycleChunks - 1) early = cpu() - t0;
    if (i === LATE + cycleChunks - 1) late = cpu() - t0;
  }
  s.finish();
  return { early: early / cycleChunks, late: late / cycleChunks };
}

/** The naive way at the same points: the whole prefix rendered for each chunk of a window (sampled), µs of CPU. */
function naiveRun(): { early: number; late: number } {
  const at = (start: number): number => {
    const step = Math.max(1, Math.floor(cycleChunks / 10));
    let sum = 0;
    let n = 0;
    for (let i = start; i < start + cycleChunks; i += step) {
      const prefix = answer.slice(0, (i + 1) * CHUNK);
      const t0 = cpu();
      renderMarkdown(prefix, { width: WIDTH, color: true });
      sum += cpu() - t0;
      n++;
    }
    return sum / n;
  };
  return { early: at(EARLY), late: at(LATE) };
}

streamRun(); // warm-up
const runs = Array.from({ length: REPS }, streamRun);
const naive = Array.from({ length: Math.max(1, Math.min(REPS, 3)) }, naiveRun);
const early = median(runs.map((r) => r.early));
const late = median(runs.map((r) => r.late));
const nEarly = median(naive.map((r) => r.early));
const nLate = median(naive.map((r) => r.late));
const ratio = late / early;

console.log(
  `render: one answer of ${chunks.length} chunks of ${CHUNK} characters (${answer.length} characters), width ${WIDTH}, ${REPS} reps`,
);
console.log(`  window: ${cycleChunks} chunks (one cycle of blocks) from chunk ${EARLY} and from chunk ${LATE}`);
console.log(`  MarkdownStream per chunk: ${early.toFixed(1)} µs at chunk ${EARLY}, ${late.toFixed(1)} µs at chunk ${LATE}`);
console.log(`  ratio late/early: ${ratio.toFixed(2)} (target ≤ 2: ${ratio <= 2 ? 'met' : 'MISSED'})`);
console.log(
  `  baseline, whole prefix re-rendered per chunk: ${(nEarly / 1000).toFixed(2)} ms at chunk ${EARLY}, ${(nLate / 1000).toFixed(2)} ms ` +
    `at chunk ${LATE} (ratio ${(nLate / nEarly).toFixed(1)}); the stream at chunk ${LATE} is ${(nLate / late).toFixed(0)}x cheaper`,
);
if (ratio > 2) process.exitCode = 1;
