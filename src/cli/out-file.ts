/**
 * Writing a command's output file (`replay --out`, `log import -o`): checked before the work,
 * written whole or not at all, never over the input through a link.
 */
import { accessSync, constants, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from './errors.js';

/**
 * Whether two paths name one file: the same path, or (when both exist) the same file through a
 * symbolic or hard link, which a comparison of paths alone would miss.
 */
export function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false; // one of them does not exist (yet): not the same file
  }
}

/** `--out` is checked before the work runs, so a bad path does not cost a whole replay or import. */
export function checkOut(out: string, what: string): void {
  const fail = (why: string, cause?: unknown): CliError => new CliError('WRITE_FAILED', `--out: ${why}`, { file: out, cause });
  let st;
  try {
    st = statSync(out);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) throw fail(`is a directory; name a file to write ${what} to`);
  const dir = dirname(resolve(out));
  try {
    if (!statSync(dir).isDirectory()) throw fail(`${dir} is not a directory`);
    accessSync(st ? out : dir, constants.W_OK);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw fail(
      code === 'ENOENT' || code === 'ENOTDIR' ? `no such directory ${dir}` : `cannot write there (${code ?? (e as Error).message})`,
      e,
    );
  }
}

/**
 * Write a log whole or not at all: into a temporary file beside the target, then
 * renamed over it, so an interrupted write never leaves half a log (or half of an older file).
 * A symbolic link as the target is written through, to the file it points at.
 */
export function writeOut(out: string, text: string, what: string): void {
  let target = out;
  try {
    target = realpathSync(out);
  } catch {
    // does not exist yet
  }
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text, { flag: 'wx' });
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new CliError('WRITE_FAILED', `cannot write ${what}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      file: out,
      cause: e,
    });
  }
}
