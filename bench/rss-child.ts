/**
 * Peak-RSS probe, run in a fresh process per measurement by bench/main.ts: load one file and
 * report the process's peak resident set. It imports nothing but the session layer, so the idle
 * figure is close to a bare Node process.
 *
 *   node --expose-gc dist-bench/bench/rss-child.js MODE FILE
 *   MODE: stream  loadJsonlFile(FILE) (read in 1 MiB chunks)
 *         text    readFileSync(FILE, 'utf8') then loadJsonl(text)
 *         json    readFileSync(FILE, 'utf8') then JSON.parse of each line, objects kept (baseline)
 */
import { readFileSync } from 'node:fs';
import { loadJsonl, loadJsonlFile } from '../src/session/index.js';
import { parseLines } from './parse-lines.js';

const [mode, file] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
gc();
const idle = process.memoryUsage().rss;
let keep: unknown;
let count = 0;
if (mode === 'stream') {
  const loaded = loadJsonlFile(file!);
  count = loaded.session.length;
  keep = loaded.session;
} else if (mode === 'text') {
  const loaded = loadJsonl(readFileSync(file!, 'utf8'));
  count = loaded.session.length;
  keep = loaded.session;
} else if (mode === 'json') {
  const out = parseLines(readFileSync(file!, 'utf8'));
  count = out.length;
  keep = out;
} else {
  throw new Error(`unknown mode ${String(mode)}`);
}
gc();
const after = process.memoryUsage();
process.stdout.write(JSON.stringify({ idle, peak: process.resourceUsage().maxRSS * 1024, rssAfter: after.rss, heapUsedAfter: after.heapUsed, count, alive: keep !== undefined }));
