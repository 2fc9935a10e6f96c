/**
 * Terminal rendering of a streamed answer (issue 15 item 8): the cost of one chunk pushed into a
 * `MarkdownStream` early in an answer (from chunk 100) and late in it (from chunk 10,000). Only
 * the last open block is laid out again per chunk, so the two must be about equal (target: the
 * late/early ratio at most 2). The same-run baseline is the naive way, the whole answer so far
 * rendered again for each chunk (`renderMarkdown` of the prefix), at the same two points: its
 * ratio shows what the stream avoids.
 *
 * Two answers, each cut into 5-character chunks and measured over one whole cycle of its text
 * (so both windows meet the same text in the same order): one repeats a cycle of blocks (heading,
 * paragraphs with inline styles and wide text, a list, a short fenced TypeScript block, a table, a
 * quote); the second is one fenced TypeScript block that stays open, the case where the open block
 * is the whole answer (issue 15 review, finding 6); the third is the same block inside a list item
 * (`1. Create it:` then an indented fence, what models write all the time; second review, N7).
 *
 * The third case was re-lexed and laid out whole per chunk until a fence open inside a list item
 * or a quote was taken a line at a time too (src/terminal/render/container-fence.ts); it is now
 * streamed chunk by chunk like the others. (`primed` pushes the text before each window as one
 * chunk instead, for a case that would take minutes to stream.)
 *
 *   node dist-bench/bench/render.js [--reps N] [--width W]
 */
import { MarkdownStream, renderMarkdown } from '../src/terminal/render/markdown.js';
import { benchArgs, count } from './args.js';

const USAGE = `bench/render.js: the cost of a streamed chunk early and late in an answer, beside re-rendering the whole answer

  node dist-bench/bench/render.js [--reps N] [--width COLUMNS]

  --reps N           timed runs, medians (default 5)
  --width COLUMNS    terminal width to lay out at (default 100)
  -h, --help         this text
`;
const { values: args } = benchArgs(USAGE, { reps: { type: 'string' }, width: { type: 'string' } });
const REPS = count(USAGE, 'reps', args.reps, 5);
const WIDTH = count(USAGE, 'width', args.width, 100);
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

/**
 * The second answer: one fenced TypeScript block of many lines (the "here is the whole file"
 * answer), its cycle of lines (a doc comment, a template string across lines, plain code)
 * repeated. Its fence stays open through both windows.
 */
const CODE_CYCLE = [
  '/**',
  ' * Folds the events into a state: {n}.',
  ' */',
  'export function fold{n}(events: readonly Event[], seed = 0): State {',
  '  let s = initial(seed);',
  '  for (const e of events) {',
  '    // each event moves the state on',
  '    s = step(s, e, `event ${e.seq}',
  '      of ${events.length}`);',
  '  }',
  "  return { ...s, done: true, note: 'folded' };",
  '}',
  '',
];

/** `text` padded with spaces (before its last line end) to a whole number of chunks. */
function padded(text: string): string {
  const rem = text.length % CHUNK;
  return rem === 0 ? text : `${text.slice(0, -1)}${' '.repeat(CHUNK - rem)}\n`;
}

interface Case {
  name: string;
  /** Push the text before each window as one chunk (see the header), instead of streaming it. */
  primed?: boolean;
  answer: string;
  chunks: string[];
  /** Chunks in one window: one whole cycle, so both windows meet the same text in the same order. */
  window: number;
}

function makeCase(name: string, head: string, cycle: (n: number) => string, primed = false): Case {
  const window = cycle(0).length / CHUNK;
  const total = LATE + 2 * window + head.length / CHUNK;
  let answer = head;
  for (let i = 0; answer.length < total * CHUNK; i++) answer += cycle(i);
  const chunks: string[] = [];
  for (let i = 0; i < total; i++) chunks.push(answer.slice(i * CHUNK, (i + 1) * CHUNK));
  return { name, answer, chunks, window, ...(primed ? { primed } : {}) };
}

const cases: Case[] = [
  makeCase('prose, lists, tables and short code blocks', '', (n) =>
    padded(`${CYCLE_BLOCKS.join('\n\n').replace('{n}', String(n % 10))}\n\n`),
  ),
  makeCase('one long fenced code block', padded('Here is the file:\n\n```ts\n'), (n) =>
    padded(`${CODE_CYCLE.join('\n').replaceAll('{n}', String(n % 10))}\n`),
  ),
  makeCase('one long fenced code block inside a list item', padded('Steps:\n\n1. Create it:\n\n   ```ts\n'), (n) =>
    padded(
      `${CODE_CYCLE.map((l) => (l === '' ? '' : `   ${l}`))
        .join('\n')
        .replaceAll('{n}', String(n % 10))}\n`,
    ),
  ),
];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
/** CPU time of this process in µs. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Mean µs of CPU time per chunk over the windows [EARLY, EARLY+window) and [LATE, LATE+window),
 * streaming. CPU time of this process (user + system), not wall time: other work on a shared
 * machine then adds little.
 */
function streamRun(c: Case): { early: number; late: number } {
  if (c.primed) return { early: primedWindow(c, EARLY), late: primedWindow(c, LATE) };
  const s = new MarkdownStream({ width: WIDTH, color: true });
  let early = 0;
  let late = 0;
  let t0 = 0;
  for (let i = 0; i < c.chunks.length; i++) {
    if (i === EARLY || i === LATE) t0 = cpu();
    s.push(c.chunks[i]!);
    if (i === EARLY + c.window - 1) early = cpu() - t0;
    if (i === LATE + c.window - 1) late = cpu() - t0;
  }
  s.finish();
  return { early: early / c.window, late: late / c.window };
}

/** Mean µs of CPU per chunk over the window from chunk `start`, the text before it pushed as one chunk. */
function primedWindow(c: Case, start: number): number {
  const s = new MarkdownStream({ width: WIDTH, color: true });
  s.push(c.chunks.slice(0, start).join(''));
  const t0 = cpu();
  for (let i = start; i < start + c.window; i++) s.push(c.chunks[i]!);
  const used = cpu() - t0;
  s.finish();
  return used / c.window;
}

/** The naive way at the same points: the whole prefix rendered for each chunk of a window (sampled), µs of CPU. */
function naiveRun(c: Case): { early: number; late: number } {
  const at = (start: number): number => {
    const step = Math.max(1, Math.floor(c.window / 10));
    let sum = 0;
    let n = 0;
    for (let i = start; i < start + c.window; i += step) {
      const prefix = c.answer.slice(0, (i + 1) * CHUNK);
      const t0 = cpu();
      renderMarkdown(prefix, { width: WIDTH, color: true });
      sum += cpu() - t0;
      n++;
    }
    return sum / n;
  };
  return { early: at(EARLY), late: at(LATE) };
}

let missed = false;
for (const c of cases) {
  streamRun(c); // warm-up
  const runs = Array.from({ length: REPS }, () => streamRun(c));
  const naive = Array.from({ length: Math.max(1, Math.min(REPS, 3)) }, () => naiveRun(c));
  const early = median(runs.map((r) => r.early));
  const late = median(runs.map((r) => r.late));
  const nEarly = median(naive.map((r) => r.early));
  const nLate = median(naive.map((r) => r.late));
  const ratio = late / early;
  if (ratio > 2) missed = true;
  console.log(
    `render, ${c.name}: one answer of ${c.chunks.length} chunks of ${CHUNK} characters ` +
      `(${c.answer.length} characters), width ${WIDTH}, ${REPS} reps`,
  );
  console.log(`  window: ${c.window} chunks (one cycle) from chunk ${EARLY} and from chunk ${LATE}`);
  console.log(`  MarkdownStream per chunk: ${early.toFixed(1)} µs at chunk ${EARLY}, ${late.toFixed(1)} µs at chunk ${LATE}`);
  console.log(`  ratio late/early: ${ratio.toFixed(2)} (target ≤ 2: ${ratio <= 2 ? 'met' : 'MISSED'})`);
  console.log(
    `  baseline, whole prefix re-rendered per chunk: ${(nEarly / 1000).toFixed(2)} ms at chunk ${EARLY}, ${(nLate / 1000).toFixed(2)} ms ` +
      `at chunk ${LATE} (ratio ${(nLate / nEarly).toFixed(1)}); the stream at chunk ${LATE} is ${(nLate / late).toFixed(0)}x cheaper`,
  );
}
/**
 * One very long line (a base64 blob, no space to break at), rendered once at 20 KB and at 200 KB:
 * Node 20's grapheme segmenter is quadratic in a string's length, so before the windowed
 * segmentation (src/model/graphemes.ts) 200 KB took minutes. Target: CPU per character at 200 KB
 * at most 2× that at 20 KB (linear). Baseline, same run: the same text cut into WIDTH-column
 * slices by `slice` (the least any wrap must do).
 */
function longLine(chars: number): { ours: number; naive: number } {
  const text = 'QUJD+/9z'.repeat(Math.ceil(chars / 8)).slice(0, chars);
  const ours: number[] = [];
  const naive: number[] = [];
  for (let r = 0; r < Math.max(3, Math.min(REPS, 5)); r++) {
    let t0 = cpu();
    renderMarkdown(text, { width: WIDTH, color: true });
    ours.push(cpu() - t0);
    t0 = cpu();
    const rows: string[] = [];
    for (let i = 0; i < text.length; i += WIDTH) rows.push(text.slice(i, i + WIDTH));
    naive.push(cpu() - t0 + (rows.length > 0 ? 0 : 1));
  }
  return { ours: median(ours), naive: Math.max(1, median(naive)) };
}
longLine(20_000); // warm-up
const small = longLine(20_000);
const big = longLine(200_000);
const perChar = big.ours / 200_000 / (small.ours / 20_000);
if (perChar > 2) missed = true;
console.log(`render, one line with no space (a base64 blob), width ${WIDTH}, renderMarkdown once`);
console.log(
  `  20 KB: ${(small.ours / 1000).toFixed(1)} ms (slices baseline ${(small.naive / 1000).toFixed(2)} ms); ` +
    `200 KB: ${(big.ours / 1000).toFixed(1)} ms (baseline ${(big.naive / 1000).toFixed(2)} ms)`,
);
console.log(`  CPU per character, 200 KB / 20 KB: ${perChar.toFixed(2)} (target ≤ 2, linear: ${perChar <= 2 ? 'met' : 'MISSED'})`);
if (missed) process.exitCode = 1;
