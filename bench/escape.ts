/**
 * The escape of untrusted log text (issue 12 item 5: one table for terminal and page), timed
 * beside the escape as it was before issue 12's reviews widened it, in the same process on the
 * same texts, alternately, median of the runs.
 *
 * Ours: `oneLine` and `block` (src/cli/text.ts, what `dsh log show` and the other CLI views call
 * for every text they print) and the page's `visible` (src/viewer/page/dom.js: the served
 * `unsafeEscaper` over the served ranges and `escapeUnsafeChar`, built here as the page builds it).
 * Baseline: the same three as they were at ecb7e92^ (the table shared, before review 2's
 * widening): a BMP-only class without the `u` flag, no backslash or lone-surrogate escape, and
 * `oneLine` folding `\s+` before the escape. Frozen below; it is the yardstick, not code in use.
 *
 * Texts: every string in the bench workload's events (bench/generate.ts: prompts, deltas,
 * answers, tool arguments and ~2 KB results), as logged; and the same texts with, every ~500
 * characters, one character the escape must act on (a control, a bidi override, a zero-width
 * space, or a backslash before `u`) so the replacing path is timed too.
 *
 *   node dist-bench/bench/escape.js [--reps N] [--turns N]
 */
import { block, oneLine } from '../src/cli/text.js';
import { escapeUnsafeChar, UNSAFE_CHARS, unsafeEscaper } from '../src/model/unsafe-chars.js';
import { generateWorkload } from './generate.js';
import { benchArgs, count } from './args.js';

const USAGE = `bench/escape.js: the escape of untrusted log text, beside the escape as it was before issue 12's reviews

  node dist-bench/bench/escape.js [--reps N] [--turns N]

  --reps N     timed runs, medians (default 7)
  --turns N    workload turns whose texts are escaped (default 100)
  -h, --help   this text
`;
const { values: args } = benchArgs(USAGE, { reps: { type: 'string' }, turns: { type: 'string' } });
const REPS = count(USAGE, 'reps', args.reps, 7);
const TURNS = count(USAGE, 'turns', args.turns, 100);

// The baseline: src/model/unsafe-chars.ts, src/cli/text.ts and src/viewer/page/dom.js at ecb7e92^.
const OLD_CLASS =
  '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200d\\u200e-\\u200f\\u2028-\\u2029' +
  '\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';
const OLD = new RegExp(`[${OLD_CLASS}]`, 'g');
const OLD_TEST = new RegExp(`[${OLD_CLASS}]`);
const oldChar = (c: string): string => {
  const n = c.charCodeAt(0);
  if (n === 0x0d) return '\\r';
  if (n === 0x1b) return '\\e';
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};
const oldOneLine = (s: string): string => {
  const flat = s.replace(/\s+/g, ' ');
  return OLD_TEST.test(flat) ? flat.replace(OLD, oldChar) : flat;
};
const oldBlock = (s: string): string => (OLD_TEST.test(s) ? s.replace(OLD, oldChar) : s);
const oldVisible = (s: string): string => s.replace(OLD, oldChar);

// The page's visible() as dom.js builds it from the served module (whose UNSAFE_RANGES are the table's from/to).
const PAGE = unsafeEscaper(UNSAFE_CHARS, escapeUnsafeChar);
const visible = (s: string): string => PAGE.escape(s);

/** Every string in `v`, depth first. */
function strings(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
}

const plain: string[] = [];
for (const d of generateWorkload({ turns: TURNS })) strings(d.data, plain);
const ODD = ['\x1b', '\u202e', '\u200b', '\\u'];
let k = 0;
// Through JSON, as a log's texts arrive: flat strings, not the concatenations built here.
const hostile: string[] = JSON.parse(
  JSON.stringify(
    plain.map((s) => {
      let out = '';
      for (let i = 0; i < s.length; i += 500) out += s.slice(i, i + 500) + (s.length > i + 250 ? ODD[k++ % ODD.length] : '');
      return out;
    }),
  ),
);
const chars = plain.reduce((n, s) => n + s.length, 0);

/** CPU µs of this process. */
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let sink = 0;
function time(f: (s: string) => string, texts: readonly string[]): number {
  const t0 = cpu();
  for (const s of texts) sink += f(s).length;
  return cpu() - t0;
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

console.log(`escape of log text: ${plain.length} strings, ${(chars / 1e6).toFixed(1)} M characters (${TURNS} turns), ${REPS} runs`);
console.log('CPU time per pass, median; ratio to the escape before issue 12 review 2 (ecb7e92^), same run, alternated');
const pairs: [string, (s: string) => string, (s: string) => string][] = [
  ['oneLine (terminal, one line)', oneLine, oldOneLine],
  ['block (terminal, block)', block, oldBlock],
  ['visible (page)', visible, oldVisible],
];
for (const [label, texts] of [
  ['plain texts', plain],
  ['texts with one escape per ~500 characters', hostile],
] as const) {
  console.log(`\n${label}`);
  for (const [name, ours, base] of pairs) {
    time(ours, texts);
    time(base, texts);
    const o: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < REPS; r++) {
      b.push(time(base, texts));
      o.push(time(ours, texts));
    }
    const mo = median(o);
    const mb = median(b);
    const ns = (us: number): string => `${((us * 1000) / chars).toFixed(2)} ns/char`;
    console.log(
      `  ${name.padEnd(30)} ${(mo / 1000).toFixed(1)} ms (${ns(mo)})  baseline ${(mb / 1000).toFixed(1)} ms  ${(mo / mb).toFixed(2)}×`,
    );
  }
}
if (sink < 0) console.log(sink);
