/**
 * Scrubbing dsh's own environment block. A process's initial environment stays in its memory for
 * its whole life, and anything running as the same user reads it back from
 * `/proc/<pid>/environ` (or `ps e`): `delete process.env.KEY` only unlinks it from libc's table.
 * So once the agent commands have read their keys, the bytes of every hidden variable in that
 * block are overwritten in place (through `/proc/self/mem`, which a process may write for itself),
 * after its value has been copied into the heap (`process.env[K] = v`, libc's own copy): the
 * process keeps working with its keys, and `/proc/<dsh>/environ` no longer shows them.
 *
 * Linux only; elsewhere, or if the kernel refuses the write, nothing changes and the caller is told.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

export interface ScrubResult {
  /** Variables whose bytes were overwritten. */
  scrubbed: string[];
  /** Why nothing could be done, when nothing was. */
  unavailable?: string;
}

/** Overwrite the initial-environment bytes of `names` (their values stay in `process.env`). */
export function scrubEnviron(names: ReadonlySet<string>): ScrubResult {
  if (process.platform !== 'linux') return { scrubbed: [], unavailable: 'not Linux' };
  let start: number;
  let block: Buffer;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; env_start is 50.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return { scrubbed: [], unavailable: 'no environment block in /proc/self/stat' };
    block = readFileSync('/proc/self/environ');
  } catch (e) {
    return { scrubbed: [], unavailable: (e as Error).message };
  }
  const targets: { name: string; offset: number; length: number }[] = [];
  let offset = 0;
  for (const entry of block.toString('latin1').split('\0')) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq) : '';
    if (names.has(name)) targets.push({ name, offset, length: Buffer.byteLength(entry, 'latin1') });
    offset += Buffer.byteLength(entry, 'latin1') + 1;
  }
  if (targets.length === 0) return { scrubbed: [] };
  // libc's table must stop pointing into the block before its bytes change.
  for (const t of targets) {
    const v = process.env[t.name];
    if (v !== undefined) process.env[t.name] = `${v}`;
  }
  let fd: number | undefined;
  const scrubbed: string[] = [];
  try {
    fd = openSync('/proc/self/mem', 'r+');
    for (const t of targets) {
      writeSync(fd, Buffer.alloc(t.length, 0), 0, t.length, start + t.offset);
      scrubbed.push(t.name);
    }
  } catch (e) {
    return { scrubbed, unavailable: (e as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return { scrubbed };
}
