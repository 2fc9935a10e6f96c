/**
 * `glob` (find files by path pattern) and `grep` (search contents). Both go through the
 * filesystem seam; an over-cap result shows its first page and saves the complete list.
 */
import { builtinParameters } from './parameters.js';
import type { GlobArgs, GrepArgs } from './schemas.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ToolDefinition } from '../types.js';
import { ToolError } from '../types.js';
import { pathMatcher, GlobSyntaxError } from '../glob-match.js';
import { workspaceRelative } from '../fs/paths.js';
import { fsFor, spillNote, type BuiltinEnv } from './env.js';

export const GLOB_MAX_RESULTS = 100;
export const GREP_MAX_MATCHES = 250;
const GREP_MAX_LINE_CHARS = 2000;
const GLOB_WALK_LIMIT = 200_000;

async function saveList(env: BuiltinEnv, label: string, text: string): Promise<string | undefined> {
  try {
    await mkdir(env.spillDir, { recursive: true });
    const p = join(env.spillDir, `${randomUUID().slice(0, 12)}-${label}.txt`);
    await writeFile(p, text);
    return p;
  } catch {
    return undefined;
  }
}

export function globTool(env: BuiltinEnv): ToolDefinition<GlobArgs> {
  return {
    name: 'glob',
    description:
      'Find files whose paths match a glob pattern. Returns file paths (never directories), including hidden and ignored files (VCS ' +
      `metadata excluded), in modification-time order. Up to ${GLOB_MAX_RESULTS} paths are shown; the complete list of a larger ` +
      'result is saved to a file.',
    parameters: builtinParameters('glob'),
    isConcurrencySafe: () => true,
    permission: { effects: 'none', subject: (a) => ({ kind: 'path', value: a.path ?? '.' }) },
    async execute(args, ctx) {
      let match: (rel: string) => boolean;
      try {
        match = pathMatcher(args.pattern);
      } catch (e) {
        if (e instanceof GlobSyntaxError) throw new ToolError('SEARCH_INVALID_PATTERN', `invalid glob pattern: ${e.message}`);
        throw e;
      }
      const listing = await fsFor(ctx, env).list(args.path ?? '.', { recursive: true, gitignore: false, limit: GLOB_WALK_LIMIT });
      const prefix = workspaceRelative(ctx.cwd, listing.path);
      const hits = listing.entries.filter((e) => match(e.path)).sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1));
      const paths = hits.map((e) => (prefix === '' || prefix.startsWith('..') ? e.path : `${prefix}/${e.path}`));
      if (paths.length === 0) return { content: 'No files found', meta: { shape: 'paths', paths: [], truncated: false, total: 0 } };
      const shownPaths = paths.slice(0, GLOB_MAX_RESULTS);
      let text = shownPaths.join('\n');
      const walkNote = listing.truncated ? ` The walk stopped after ${GLOB_WALK_LIMIT} files; narrow path.` : '';
      if (paths.length > GLOB_MAX_RESULTS) {
        const saved = await saveList(env, 'glob', paths.join('\n'));
        const showing = `Showing ${GLOB_MAX_RESULTS} of ${paths.length} paths`;
        const note = saved
          ? spillNote(showing, saved)
          : `(${showing}. The complete result could not be saved; narrow pattern or path to see more.)`;
        text += `\n\n${note}${walkNote}`;
      } else if (walkNote) text += `\n\n(${walkNote.trim()})`;
      return {
        content: text,
        meta: { shape: 'paths', paths: shownPaths, truncated: paths.length > GLOB_MAX_RESULTS || listing.truncated, total: paths.length },
      };
    },
  };
}

export function grepTool(env: BuiltinEnv): ToolDefinition<GrepArgs> {
  return {
    name: 'grep',
    description:
      'Search file contents with a regular expression, honouring .gitignore. Returns matching lines with line numbers, grouped by ' +
      `file. The first ${GREP_MAX_MATCHES} matches are shown; the complete list of a larger result is saved to a file. Use read on ` +
      'a matched file for surrounding context.',
    parameters: builtinParameters('grep'),
    isConcurrencySafe: () => true,
    permission: { effects: 'none', subject: (a) => ({ kind: 'path', value: a.path ?? '.' }) },
    async execute(args, ctx) {
      if (args.include !== undefined && (args.include.startsWith('!') || /,(?![^{]*})/.test(args.include))) {
        throw new ToolError('INVALID_INCLUDE', `include takes ONE positive glob (e.g. "*.ts" or "*.{ts,tsx}"), not "${args.include}"`);
      }
      const extra = { pattern: args.pattern, maxMatches: Number.MAX_SAFE_INTEGER, maxLineChars: GREP_MAX_LINE_CHARS };
      const r = await fsFor(ctx, env).search(args.path ?? '.', args.include !== undefined ? { ...extra, include: args.include } : extra);
      const linked = r.skippedHardLinks
        ? `\n(${r.skippedHardLinks} file${r.skippedHardLinks === 1 ? ' was' : 's were'} not searched: more than one hard link, so ` +
          'possibly a file outside the workspace)'
        : '';
      if (r.total === 0) return { content: `No matches found${linked}`, meta: { kind: 'matches', files: [], truncated: false, total: 0 } };
      const format = (ms: typeof r.matches): string => {
        const out: string[] = [];
        let file: string | undefined;
        for (const m of ms) {
          if (m.path !== file) {
            if (file !== undefined) out.push('');
            out.push(`${m.path}:`);
            file = m.path;
          }
          out.push(`  Line ${m.lineNumber}: ${m.line}`);
        }
        return out.join('\n');
      };
      const page = r.matches.slice(0, GREP_MAX_MATCHES);
      const files = new Set(r.matches.map((m) => m.path)).size;
      let text = `Found ${r.total} match${r.total === 1 ? '' : 'es'} in ${files} file${files === 1 ? '' : 's'}\n\n${format(page)}`;
      if (r.matches.length > GREP_MAX_MATCHES) {
        const saved = await saveList(env, 'grep', format(r.matches));
        const showing = `Showing ${GREP_MAX_MATCHES} of ${r.total} matches`;
        const note = saved
          ? spillNote(showing, saved)
          : `(${showing}. The complete result could not be saved; narrow the pattern, path or include.)`;
        text += `\n\n${note}`;
      }
      if (r.truncated) text += `\n(The search stopped early after ${r.total} matches; narrow it to see everything.)`;
      text += linked;
      const grouped = new Map<string, { lineNumber: number; line: string }[]>();
      for (const m of page) grouped.set(m.path, [...(grouped.get(m.path) ?? []), { lineNumber: m.lineNumber, line: m.line }]);
      return {
        content: text,
        meta: {
          kind: 'matches',
          files: [...grouped].map(([path, matches]) => ({ path, matches })),
          truncated: r.matches.length > GREP_MAX_MATCHES || r.truncated,
          total: r.total,
          backend: r.backend,
        },
      };
    },
  };
}
