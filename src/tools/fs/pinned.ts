/**
 * A confined file pinned while something else opens it by name (the ACP editor's
 * `fs/read_text_file`). The other side follows links, so what policy checked is only what it
 * opens if no name on the way was rebound meanwhile. We cannot stop a rebinding; we can see it.
 *
 * A pin walks the path from its root through verified handles (`beneath.ts`: `O_NOFOLLOW` at each
 * step, the real path of each descriptor read back) and records the root's device and inode and,
 * for every directory below the root and for the file, its device, inode and change time. The file's descriptor stays open until
 * the pin is released, so its inode number cannot be given to another file meanwhile. Two pins
 * taken around the other side's open compare:
 *
 * - `moved`: a link appeared, something is missing, or a step is another inode: the name led
 *   elsewhere at some point.
 * - `touched`: the same inodes, but one changed its status: a rename (a swap put back, say),
 *   a link count, a write, or an entry created or removed in a directory on the way. Renaming an
 *   entry away and back changes its change time, so a swap that was undone is not invisible.
 * - `same`: nothing on the way changed status.
 */
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { FsRequest } from './hooks.js';
import { FsError, fsErrorFrom } from './errors.js';
import { closeAll, openRoot, openSubdir, partsBelow, verifyInside, type Dir } from './beneath.js';
import { openExisting } from './local.js';

interface Step {
  dev: bigint;
  ino: bigint;
  ctimeNs: bigint;
}

export interface Pin {
  /** The file, open for reading; `release` closes it. */
  fh: FileHandle;
  size: number;
  /** The root, every directory below it, then the file. */
  steps: readonly Step[];
  release(): Promise<void>;
}

export type PinComparison = 'same' | 'touched' | 'moved';

const stepOf = (st: BigIntStats): Step => ({ dev: st.dev, ino: st.ino, ctimeNs: st.ctimeNs });

/**
 * Pin the confined regular file `p` (a checked real path below `root`) with the local terminals'
 * errors: not found, a directory, a device, a file with other hard links, a link on the way.
 */
export async function pinFile(r: FsRequest, root: string, p: string, verb: string, linkVerb: string): Promise<Pin> {
  const parts = partsBelow(root, p, p);
  const name = parts.at(-1);
  if (name === undefined) throw new FsError('FS_IS_DIRECTORY', `cannot ${verb} "${p}": it is a directory, not a file`);
  let dir: Dir = await openRoot(root, p);
  const steps: Step[] = [];
  try {
    // The root's own entries come and go freely; only that it is the same directory matters.
    const top = await dir.fh.stat({ bigint: true });
    steps.push({ dev: top.dev, ino: top.ino, ctimeNs: 0n });
    for (const part of parts.slice(0, -1)) {
      const next = await openSubdir(dir, part, verb, p);
      await dir.fh.close();
      dir = next;
      steps.push(stepOf(await dir.fh.stat({ bigint: true })));
    }
    await verifyInside(dir.fh, root, p);
    const { fh, st } = await openExisting(r, { dir, name, root }, p, verb, linkVerb);
    try {
      steps.push(stepOf(await fh.stat({ bigint: true })));
    } catch (e) {
      await fh.close();
      throw e;
    }
    return { fh, size: st.size, steps, release: () => fh.close().catch(() => undefined) };
  } catch (e) {
    throw fsErrorFrom(e, verb, p);
  } finally {
    await closeAll([dir]);
  }
}

export function comparePins(a: Pin, b: Pin): PinComparison {
  if (a.steps.length !== b.steps.length) return 'moved';
  let touched = false;
  for (const [i, s] of a.steps.entries()) {
    const t = b.steps[i]!;
    if (s.dev !== t.dev || s.ino !== t.ino) return 'moved';
    if (s.ctimeNs !== t.ctimeNs) touched = true;
  }
  return touched ? 'touched' : 'same';
}

/** The pinned file's bytes, or undefined when it holds more than `maxBytes`. */
export async function pinnedBytes(pin: Pin, maxBytes: number): Promise<Buffer | undefined> {
  if (pin.size > maxBytes) return undefined;
  const buf = Buffer.alloc(pin.size + 1);
  let n = 0;
  for (;;) {
    const { bytesRead } = await pin.fh.read(buf, n, buf.length - n, n);
    if (bytesRead === 0) break;
    n += bytesRead;
    if (n === buf.length) return undefined; // grew past its size meanwhile
  }
  return buf.subarray(0, n);
}
