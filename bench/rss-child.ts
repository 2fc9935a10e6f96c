/**
 * Peak-RSS probe, run in a fresh process per measurement by bench/main.ts: load one file and
 * report the process's peak resident set. It imports nothing but the session layer, so the idle
 * figure is close to a bare Node process.
 *
 *   node --expose-gc dist-bench/bench/rss-child.js MODE FILE
 *   MODE: stream  loadJsonlFile(FILE) (read in 1 MiB chunks)
 *         text    readFileSync(FILE, 'utf8') then loadJsonl(text)
 *         json    readFileSync(FILE, 'utf8') then JSON.parse of each line, objects kept (baseline)
 *         expand  readFileSync(FILE, 'utf8') then decodeJsonl: every row expanded into one frozen
 *                 event object per delta, as a loader without compact runs (dsh's) holds them
 */
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { decodeJsonl, loadJsonl, loadJsonlFile } from '../src/session/index.js';
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
} else if (mode === 'expand') {
  const decoded = decodeJsonl(readFileSync(file!, 'utf8'));
  count = decoded.events.length;
  keep = decoded.events;
} else {
  throw new Error(`unknown mode ${String(mode)}`);
}
gc();
const after = process.memoryUsage();
// The young generation grows while the load allocates and stays committed: part of the peak no
// loader can give back (only --max-semi-space-size bounds it).
const young = getHeapSpaceStatistics()
  .filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space')
  .reduce((n, s) => n + s.physical_space_size, 0);
process.stdout.write(
  JSON.stringify({
    idle,
    peak: process.resourceUsage().maxRSS * 1024,
    rssAfter: after.rss,
    heapUsedAfter: after.heapUsed,
    young,
    count,
    alive: keep !== undefined,
  }),
);
