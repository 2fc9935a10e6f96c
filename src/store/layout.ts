/**
 * The on-disk layout, identical to dsh's JSONL backend with `compression: 'none'`:
 *
 *   <root>/--<normalized-cwd>--/<encoded-session-id>/session.jsonl
 *   <root>/_no-cwd/<encoded-session-id>/session.jsonl          (a session without a cwd)
 *
 * The cwd key is readable and deliberately lossy (separator runs become one `-`, long paths are
 * cut), so two cwds may share a project directory; the id segment is an injective escape, so ids
 * never collide and never traverse. These rules are dsh's (facts, not code): a log written here is
 * found by dsh at the same path, and the reverse.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { StoreError } from './errors.js';

export const LOG_FILE = 'session.jsonl';
/** dsh's default (compressed) artifact; this build refuses it rather than misreading it. */
export const COMPRESSED_LOG_FILE = 'session.jsonl.zstd';
export const LOCK_FILE = 'session.lock';
export const TORN_PREFIX = `${LOG_FILE}.torn-`;

const SAFE = /^[A-Za-z0-9._-]$/;

function escapeUnit(code: number): string {
  return `~${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * An id as one safe path segment: `[A-Za-z0-9._-]` stay, every other UTF-16 unit (and `~`, the
 * escape character) becomes `~XXXX`; `.` and `..` are escaped whole so no id can traverse.
 */
export function encodeSegment(raw: string): string {
  if (raw.length === 0) throw new StoreError('INVALID_ARGUMENT', 'a session id must be a non-empty string');
  if (raw === '.') return '~002E';
  if (raw === '..') return '~002E~002E';
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    const ch = raw[i]!;
    out += ch !== '~' && SAFE.test(ch) ? ch : escapeUnit(code);
  }
  return out;
}

/** Inverse of `encodeSegment` (for diagnostics; lookups always encode). */
export function decodeSegment(seg: string): string | undefined {
  if (seg === '~002E') return '.';
  let out = '';
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch !== '~') {
      if (!SAFE.test(ch)) return undefined;
      out += ch;
      continue;
    }
    const hex = seg.slice(i + 1, i + 5);
    if (!/^[0-9A-F]{4}$/.test(hex)) return undefined;
    out += String.fromCharCode(parseInt(hex, 16));
    i += 4;
  }
  return out;
}

/** The readable project directory name for a cwd: `--home-me-repo--`. */
export function projectKey(cwd: string): string {
  if (cwd.length === 0) throw new StoreError('INVALID_ARGUMENT', 'a cwd must be a non-empty path');
  let readable = '';
  let separatorRun = false;
  for (let i = 0; i < cwd.length; i++) {
    const ch = cwd[i]!;
    if (ch === '/' || ch === '\\' || ch === ':') {
      if (!separatorRun) readable += '-';
      separatorRun = true;
    } else {
      readable += ch !== '~' && SAFE.test(ch) ? ch : escapeUnit(cwd.charCodeAt(i));
      separatorRun = false;
    }
  }
  const slug = readable.replace(/^-+/, '') || 'root';
  // 251 + the four dashes stays under the usual 255-byte component limit.
  return `--${slug.slice(0, 251)}--`;
}

export function projectDir(root: string, cwd: string | undefined): string {
  return cwd === undefined ? join(root, '_no-cwd') : join(root, projectKey(cwd));
}

export function sessionDir(root: string, cwd: string | undefined, id: string): string {
  return join(projectDir(root, cwd), encodeSegment(id));
}

export function logPath(root: string, cwd: string | undefined, id: string): string {
  return join(sessionDir(root, cwd, id), LOG_FILE);
}

/** `$DSH_HOME/sessions`, DSH_HOME defaulting to `~/.dsh` (the config file's home, too). */
export function defaultRoot(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const h = env.DSH_HOME?.trim();
  return join(h ? resolve(h) : join(homedir(), '.dsh'), 'sessions');
}
