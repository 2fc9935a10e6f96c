/**
 * Pins taken around someone else's open by name (src/tools/fs/pinned.ts): whatever is done to the
 * file or a directory on its way between two pins, short of nothing, shows in their comparison;
 * and a pin refuses what the local terminals refuse.
 */
import { linkSync, mkdirSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FsReadRequest } from '../../src/tools/fs/hooks.js';
import { comparePins, pinFile, pinnedBytes, type Pin } from '../../src/tools/fs/pinned.js';
import { tempDir } from './helpers.js';

/** A workspace with `src/deep/f.txt` and `top.txt`. */
function tree(): string {
  const root = tempDir('dsh-pin-');
  mkdirSync(join(root, 'src', 'deep'), { recursive: true });
  writeFileSync(join(root, 'src', 'deep', 'f.txt'), 'inside\n');
  writeFileSync(join(root, 'top.txt'), 'top\n');
  writeFileSync(join(root, 'secret.txt'), 'elsewhere\n');
  return root;
}

const req = (root: string, p: string): FsReadRequest => ({
  op: 'read',
  path: p,
  requested: p,
  root,
  access: 'read',
  caller: {},
  confined: true,
  confinedTo: root,
  maxBytes: 1 << 20,
});

const pin = (root: string, rel: string): Promise<Pin> => pinFile(req(root, join(root, rel)), root, join(root, rel), 'read', 'read');

/** Things done between two pins of `src/deep/f.txt`; each leaves the same names in place. */
const OPS: Record<string, (root: string) => void> = {
  'file renamed away and back': (root) => {
    const f = join(root, 'src', 'deep', 'f.txt');
    renameSync(f, `${f}.keep`);
    symlinkSync(join(root, 'secret.txt'), f);
    unlinkSync(f);
    renameSync(`${f}.keep`, f);
  },
  'directory on the way renamed away and back': (root) => {
    const d = join(root, 'src');
    renameSync(d, `${d}.keep`);
    mkdirSync(d);
    rmdirSync(d);
    renameSync(`${d}.keep`, d);
  },
  'file written': (root) => writeFileSync(join(root, 'src', 'deep', 'f.txt'), 'inside\n'),
  'entry created in its directory': (root) => writeFileSync(join(root, 'src', 'deep', 'other.txt'), 'x'),
  'hard link made and removed': (root) => {
    const f = join(root, 'src', 'deep', 'f.txt');
    linkSync(f, join(root, 'src', 'f.alias'));
    unlinkSync(join(root, 'src', 'f.alias'));
  },
};

describe('pinned files', () => {
  it('any status change on the way between two pins shows; nothing done is "same"', async () => {
    await fc.assert(
      fc.asyncProperty(fc.subarray(Object.keys(OPS)), async (ops) => {
        const root = tree();
        // Past the file system's timestamp tick, so a change right after the pin gets a new time.
        await sleep(25);
        const a = await pin(root, 'src/deep/f.txt');
        try {
          for (const op of ops) OPS[op]!(root);
          const b = await pin(root, 'src/deep/f.txt');
          try {
            expect(comparePins(a, b)).toBe(ops.length === 0 ? 'same' : 'touched');
          } finally {
            await b.release();
          }
        } finally {
          await a.release();
        }
      }),
      { numRuns: 12 },
    );
  });

  it('a name that now leads to another file is "moved"; the root may change freely', async () => {
    const root = tree();
    const a = await pin(root, 'top.txt');
    writeFileSync(join(root, 'new-at-root.txt'), 'x');
    const same = await pin(root, 'top.txt');
    expect(comparePins(a, same)).toBe('same');
    writeFileSync(join(root, 'top.new'), 'top\n');
    renameSync(join(root, 'top.new'), join(root, 'top.txt'));
    const b = await pin(root, 'top.txt');
    expect(comparePins(a, b)).toBe('moved');
    await Promise.all([a.release(), same.release(), b.release()]);
  });

  it('refuses a link at the file or on the way, a directory, a missing file and a hard link, with the local codes', async () => {
    const root = tree();
    symlinkSync(join(root, 'secret.txt'), join(root, 'link.txt'));
    symlinkSync(join(root, 'src'), join(root, 'srclink'));
    linkSync(join(root, 'top.txt'), join(root, 'top.alias'));
    await expect(pin(root, 'link.txt')).rejects.toMatchObject({ code: 'FS_PATH_CHANGED' });
    await expect(pin(root, 'srclink/deep/f.txt')).rejects.toMatchObject({ code: 'FS_PATH_CHANGED' });
    await expect(pin(root, 'src/deep')).rejects.toMatchObject({ code: 'FS_IS_DIRECTORY' });
    await expect(pin(root, 'src/none.txt')).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    await expect(pin(root, 'top.txt')).rejects.toMatchObject({ code: 'FS_HARD_LINK' });
  });

  it('gives the pinned bytes, and none over the limit', async () => {
    const root = tree();
    const a = await pin(root, 'src/deep/f.txt');
    expect((await pinnedBytes(a, 100))?.toString()).toBe('inside\n');
    expect(await pinnedBytes(a, 3)).toBeUndefined();
    await a.release();
  });
});
