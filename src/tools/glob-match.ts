/**
 * Glob patterns compiled to regular expressions. One dialect serves the `glob` tool, grep's
 * `include`, `.gitignore` lines and permission rules, so a pattern means the same thing wherever
 * a user writes it.
 *
 * Path mode (`/`-separated): `*` and `?` never cross a `/`; `**` as a whole segment spans any
 * number of segments (including none); `[abc]`, `[!abc]`, `{a,b}` and `\x` as usual. Dotfiles are
 * matched like any other name: hiding them is the caller's decision, not the matcher's.
 *
 * Text mode (shell commands): `*` spans anything, spaces and slashes included, so
 * `git status*` matches `git status --short`.
 */
import { CodedError } from '../model/coded-error.js';

export class GlobSyntaxError extends CodedError<'INVALID_GLOB'> {
  override name = 'GlobSyntaxError';
  constructor(message: string) {
    super('INVALID_GLOB', message);
  }
}

export type GlobMode = 'path' | 'text';

function escapeRe(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

function compile(p: string, mode: GlobMode): string {
  let out = '';
  let i = 0;
  const star = mode === 'path' ? '[^/]*' : '[\\s\\S]*';
  const one = mode === 'path' ? '[^/]' : '[\\s\\S]';
  while (i < p.length) {
    const c = p[i]!;
    if (c === '\\') {
      if (i + 1 >= p.length) throw new GlobSyntaxError(`pattern "${p}" ends with a lone backslash`);
      out += escapeRe(p[i + 1]!);
      i += 2;
      continue;
    }
    if (c === '*') {
      if (mode === 'path' && p[i + 1] === '*') {
        const atSegStart = i === 0 || p[i - 1] === '/';
        const end = i + 2;
        if (atSegStart && (end === p.length || p[end] === '/')) {
          if (end === p.length) {
            out += '[\\s\\S]*'; // trailing `**`: everything below
            i = end;
          } else {
            out += '(?:[^/]*/)*'; // `**/`: zero or more whole segments
            i = end + 1;
          }
          continue;
        }
        out += star; // `a**b` is just two stars inside one segment
        i = end;
        continue;
      }
      out += star;
      i++;
      continue;
    }
    if (c === '?') {
      out += one;
      i++;
      continue;
    }
    if (c === '[') {
      const close = p.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        i++;
        continue;
      }
      let body = p.slice(i + 1, close);
      let neg = false;
      if (body.startsWith('!') || body.startsWith('^')) {
        neg = true;
        body = body.slice(1);
      }
      const cls = body.replace(/\\/g, '\\\\').replace(/]/g, '\\]');
      out += neg ? (mode === 'path' ? `[^/${cls}]` : `[^${cls}]`) : `[${cls}]`;
      i = close + 1;
      continue;
    }
    if (c === '{') {
      const close = matchingBrace(p, i);
      if (close === -1) {
        out += '\\{';
        i++;
        continue;
      }
      const alts = splitTopLevel(p.slice(i + 1, close));
      out += `(?:${alts.map((a) => compile(a, mode)).join('|')})`;
      i = close + 1;
      continue;
    }
    out += escapeRe(c);
    i++;
  }
  return out;
}

function matchingBrace(p: string, open: number): number {
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      cur += c + (s[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  return parts;
}

/** Compile a glob; the result matches the whole subject. */
export function globToRegExp(pattern: string, mode: GlobMode = 'path'): RegExp {
  return new RegExp(`^${compile(pattern, mode)}$`);
}

/**
 * A path matcher with the `glob` tool's convention: a pattern without `/` matches the basename
 * at any depth (`*.ts` finds every TypeScript file); one with `/` is anchored at the search root.
 */
export function pathMatcher(pattern: string): (relPath: string) => boolean {
  const p = pattern.startsWith('./') ? pattern.slice(2) : pattern;
  const re = globToRegExp(p.startsWith('/') ? p.slice(1) : p, 'path');
  if (!p.includes('/')) return (rel) => re.test(rel.slice(rel.lastIndexOf('/') + 1));
  return (rel) => re.test(rel);
}
