/**
 * Scrubbing dsh's own environment block. A process's initial environment stays in its memory for
 * its whole life, and anything running as the same user reads it back from
 * `/proc/<pid>/environ` (or `ps e`): `delete process.env.KEY` only unlinks it from libc's table.
 * So once the agent commands have read their keys, the bytes of every hidden variable in that
 * block are overwritten in place (through `/proc/self/mem`, which a process may write for itself),
 * after its value has been copied into the heap (`process.env[K] = v`, libc's own copy): the
 * process keeps working with its keys, and `/proc/<dsh>/environ` no longer shows them.
 *
 * Linux only; elsewhere, or if the kernel refuses the write (a read-only `/proc`, a kernel booted
 * with `proc_mem.force_override=never`), nothing changes and the caller is told. Success is not
 * assumed: the block is read back, and a variable still in it is reported as left.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { procStatFields } from '../model/proc-stat.js';

export interface ScrubResult {
  /** Variables whose bytes were overwritten. */
  scrubbed: string[];
  /** Variables of `names` still readable in the block afterwards (empty when the scrub worked). */
  left: string[];
  /** Why the block could not be (wholly) overwritten, when it could not. */
  unavailable?: string;
}

/** The names of the block's entries (`NAME=value` separated by NULs). */
function entryNames(block: Buffer): string[] {
  return block
    .toString('latin1')
    .split('\0')
    .map((e) => (e.indexOf('=') > 0 ? e.slice(0, e.indexOf('=')) : ''))
    .filter((n) => n !== '');
}

/** Which of `names` `/proc/self/environ` still shows (all of them when it cannot be read). */
function stillThere(names: ReadonlySet<string>, environ: string): string[] {
  try {
    const present = new Set(entryNames(readFileSync(environ)));
    return [...names].filter((n) => present.has(n));
  } catch {
    return [...names];
  }
}

/**
 * Overwrite the initial-environment bytes of `names` (their values stay in `process.env`).
 * `mem` is the file written through (tests point it somewhere that refuses the write).
 */
export function scrubEnviron(names: ReadonlySet<string>, opts: { mem?: string } = {}): ScrubResult {
  const result = scrub(names, opts.mem ?? '/proc/self/mem');
  if (process.platform !== 'linux') return result;
  const left = stillThere(names, '/proc/self/environ');
  if (left.length > 0 && result.unavailable === undefined) return { ...result, left, unavailable: 'the overwritten bytes still read back' };
  return { ...result, left };
}

function scrub(names: ReadonlySet<string>, mem: string): ScrubResult {
  const none = (unavailable?: string): ScrubResult => ({ scrubbed: [], left: [], ...(unavailable !== undefined ? { unavailable } : {}) });
  if (process.platform !== 'linux') return none('not Linux');
  let start: number;
  let block: Buffer;
  try {
    // Fields 50 and 51: where the environment block starts and ends in this process's memory.
    const fields = procStatFields(readFileSync('/proc/self/stat', 'utf8'));
    start = Number(fields?.[50]);
    const end = Number(fields?.[51]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return none('no environment block in /proc/self/stat');
    block = readFileSync('/proc/self/environ');
  } catch (e) {
    return none((e as Error).message);
  }
  const targets: { name: string; offset: number; length: number }[] = [];
  let offset = 0;
  for (const entry of block.toString('latin1').split('\0')) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq) : '';
    if (names.has(name)) targets.push({ name, offset, length: Buffer.byteLength(entry, 'latin1') });
    offset += Buffer.byteLength(entry, 'latin1') + 1;
  }
  if (targets.length === 0) return none();
  // libc's table must stop pointing into the block before its bytes change.
  for (const t of targets) {
    const v = process.env[t.name];
    if (v !== undefined) process.env[t.name] = `${v}`;
  }
  let fd: number | undefined;
  const scrubbed: string[] = [];
  try {
    fd = openSync(mem, 'r+');
    for (const t of targets) {
      writeSync(fd, Buffer.alloc(t.length, 0), 0, t.length, start + t.offset);
      scrubbed.push(t.name);
    }
  } catch (e) {
    return { scrubbed, left: [], unavailable: `${mem}: ${(e as Error).message}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return { scrubbed, left: [] };
}
