/**
 * Durable file primitives. A new file becomes visible only complete and on disk: its bytes go to
 * a private temp file, which is fsynced and then hard-linked to the final name. `link()` fails
 * with EEXIST instead of replacing (rename would silently overwrite a log a racing process just
 * published), and the directory is fsynced so the new entry itself survives a power loss.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import { nodeCrypto } from '../model/node-crypto.js';
import { basename, dirname, join } from 'node:path';
import { isErrno } from './errors.js';

/** Steps of a publish, for tests that kill a process at a precise point. */
export type PublishStep = 'temp-written' | 'linked';

export interface PublishOptions {
  /** Called after each step; a test seam (a child process pauses here to be killed). */
  onStep?: (step: PublishStep, path: string) => void;
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `mkdir -p`, fsyncing each parent whose entry was created, so the path survives a power loss. */
export function mkdirDurable(dir: string): void {
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (created === undefined) return;
  // `created` is the first directory made; every directory from its parent down is new or changed.
  let d = dir;
  const chain: string[] = [];
  while (d.length >= created.length) {
    chain.push(dirname(d));
    if (d === created) break;
    d = dirname(d);
  }
  for (const p of chain.reverse()) fsyncDir(p);
}

/** Write all of `data` at `position`, looping over short writes. */
export function writeAll(fd: number, data: Buffer, position: number): void {
  let off = 0;
  while (off < data.length) off += writeSync(fd, data, off, data.length - off, position + off);
}

export function tempName(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.${process.pid}.${nodeCrypto().randomBytes(6).toString('hex')}.tmp`);
}

/** Is this a temp file of ours (left behind by a process that died mid-publish)? */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Publish `data` as a new file at `finalPath`, atomically and without overwriting: returns false
 * (leaving nothing behind) when the name is taken. Other failures throw, leaving nothing behind.
 */
export function publishNew(finalPath: string, data: Buffer, opts: PublishOptions = {}): boolean {
  const tmp = tempName(finalPath);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    try {
      writeAll(fd, data, 0);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    opts.onStep?.('temp-written', tmp);
    try {
      linkSync(tmp, finalPath);
    } catch (e) {
      if (isErrno(e, 'EEXIST')) return false;
      throw e;
    }
    opts.onStep?.('linked', finalPath);
    fsyncDir(dirname(finalPath));
    return true;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // Only the redundant temp name is left; the published file (if any) is intact.
    }
  }
}

/**
 * Remove temp files that dead processes left in `dir` (a publish or lock attempt cut short).
 * A temp file's name carries its writer's pid; a live (or reused) pid keeps its file.
 */
export function sweepTemps(dir: string, isDead: (pid: number) => boolean): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!isTempName(name)) continue;
    const m = /\.(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name);
    if (!m || !isDead(Number(m[1]))) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch {
      // already gone, or not ours to remove
    }
  }
  return removed;
}
