/**
 * The resume benchmark's baseline, in a fresh process as the CLI is: read a JSONL file and
 * `JSON.parse` each line after the header, the objects kept (what any loader must at least do).
 *
 *   node dist-bench/bench/parse-child.js FILE
 */
import { readFileSync } from 'node:fs';
import { parseLines } from './parse-lines.js';

const kept = parseLines(readFileSync(process.argv[2]!, 'utf8'));
if (kept.length < 0) console.log('');
