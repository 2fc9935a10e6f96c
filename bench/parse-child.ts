/**
 * The resume benchmark's baseline, in a fresh process as the CLI is: read a JSONL file and
 * `JSON.parse` each line after the header, the objects kept (what any loader must at least do).
 * A file over V8's 512 MB string limit is decoded in slices cut at line ends.
 *
 *   node dist-bench/bench/parse-child.js FILE
 */
import { readFileSync } from 'node:fs';
import { parseLines } from './parse-lines.js';

const SLICE = 256 * 1024 * 1024;
const bytes = readFileSync(process.argv[2]!);
const kept: unknown[] = [];
for (let start = 0; start < bytes.length; ) {
  let end = Math.min(bytes.length, start + SLICE);
  if (end < bytes.length) end = bytes.lastIndexOf(0x0a, end - 1) + 1;
  // parseLines skips its text's first line (the header): a later slice gets an empty one.
  const text = (start === 0 ? '' : '\n') + bytes.toString('utf8', start, end);
  for (const v of parseLines(text)) kept.push(v);
  start = end;
}
if (kept.length < 0) console.log('');
