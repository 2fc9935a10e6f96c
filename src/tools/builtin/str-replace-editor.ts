/**
 * `str_replace_editor` of the `minimal` tool set: the widely used text-editor contract (view,
 * create, str_replace, insert) with dsh's facts and result formats: absolute paths only; `view`
 * numbers lines as `%6d` plus two spaces and counts a final newline's empty line, as dsh does;
 * a directory lists two levels, hidden entries, node_modules and Python caches left out; `create`
 * refuses an existing path; `str_replace` needs exactly one (non-overlapping) occurrence and names
 * the lines of several; `insert` puts lines after line N (0 = first). dsh's editor has no
 * `undo_edit`, so neither has this one.
 *
 * Everything goes through the filesystem seam, so workspace confinement, the sandbox mode
 * (read-only refuses the writes) and hidden config files apply as to `read`/`write`/`edit`.
 */
import { isAbsolute, join, resolve } from 'node:path';
import type { ToolDefinition, ToolResultValue, ToolRunContext } from '../types.js';
import { ToolError } from '../types.js';
import { FsError } from '../fs/errors.js';
import type { FsEntry } from '../fs/hooks.js';
import { countOccurrences } from '../fs/local.js';
import { fsFor, type BuiltinEnv } from './env.js';
import { builtinParameters } from './parameters.js';
import type { StrReplaceEditorArgs } from './schemas.js';
import { diffMeta } from './write-edit.js';

/** What `view` returns at most, in characters (dsh's default); the rest is clipped with a note. */
export const EDITOR_VIEW_MAX_CHARS = 16_000;
const MAX_READ_BYTES = 16 * 1024 * 1024;
/** Entries a directory view lists per directory before saying it stopped. */
const LIST_LIMIT = 1000;
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__']);

const CLIPPED =
  '<response clipped><NOTE>Only the beginning is shown. Ask for a smaller view_range, or find the lines you need with ' +
  '`grep -n` first.</NOTE>';

function clip(s: string, max = EDITOR_VIEW_MAX_CHARS): string {
  return s.length <= max ? s : s.slice(0, max) + CLIPPED;
}

function required<T>(value: T | undefined, name: string, command: string): T {
  if (value === undefined) throw new ToolError('EDITOR_MISSING_PARAMETER', `${command} needs the \`${name}\` parameter`);
  return value;
}

/** 1-based line numbers of the offsets of `needle`'s non-overlapping occurrences. */
export function occurrenceLines(haystack: string, needle: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) {
    for (; scanned < i; scanned++) if (haystack.charCodeAt(scanned) === 10) line++;
    lines.push(line);
  }
  return lines;
}

/** dsh's numbered view: `%6d` and two spaces per line; a final newline leaves an empty last line, which counts. */
export function numberedView(shown: string, text: string, range?: readonly number[]): string {
  const all = text.split('\n');
  let first = 1;
  let lines = all;
  let title = `Here's the content of ${shown} with line numbers (which has a total of ${all.length} lines)`;
  if (range !== undefined) {
    const [a, b] = range;
    if (range.length !== 2 || a === undefined || b === undefined)
      throw new ToolError('EDITOR_BAD_RANGE', 'view_range must be two integers: [first, last] (last -1 for the end)');
    if (a < 1 || a > all.length)
      throw new ToolError('EDITOR_BAD_RANGE', `view_range [${a}, ${b}]: the first line must be between 1 and ${all.length}`);
    if (b > all.length)
      throw new ToolError('EDITOR_BAD_RANGE', `view_range [${a}, ${b}]: the last line must be at most ${all.length}, or -1`);
    if (b !== -1 && b < a) throw new ToolError('EDITOR_BAD_RANGE', `view_range [${a}, ${b}]: the last line comes before the first`);
    first = a;
    lines = b === -1 ? all.slice(a - 1) : all.slice(a - 1, b);
    title += ` with view_range=[${a}, ${b}]`;
  }
  const body = lines.map((l, i) => `${String(first + i).padStart(6, ' ')}  ${l}`).join('\n');
  return clip(`${title}:\n${body}\n`);
}

async function listTwoLevels(ctx: ToolRunContext, env: BuiltinEnv, dir: string): Promise<string> {
  const fs = fsFor(ctx, env);
  const rows: { type: string; path: string }[] = [{ type: 'd', path: dir }];
  let truncated = false;
  const visit = async (path: string, depth: number): Promise<void> => {
    const list = await fs.list(path, { recursive: false, gitignore: false, limit: LIST_LIMIT });
    truncated ||= list.truncated;
    const shown = list.entries.filter((e: FsEntry) => !e.path.startsWith('.') && !SKIPPED_DIRS.has(e.path));
    for (const e of shown) {
      const full = join(path, e.path);
      rows.push({ type: e.type === 'directory' ? 'd' : e.type === 'file' ? 'f' : '?', path: full });
      if (e.type === 'directory' && depth < 2) await visit(full, depth + 1);
    }
  };
  await visit(dir, 1);
  rows.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const more = truncated ? `(more than ${LIST_LIMIT} entries in a directory: the rest are not listed)\n` : '';
  const listing = clip(`${rows.map((r) => `${r.type}\t${r.path}`).join('\n')}\n${more}`);
  return (
    `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items, node_modules, and Python cache ` +
    `directories:\n${listing}\n`
  );
}

function edited(ctx: ToolRunContext, shown: string, before: string, after: string): ToolResultValue {
  return { content: `The file ${shown} has been edited successfully.`, meta: diffMeta(ctx.cwd, shown, before, after) };
}

export function strReplaceEditorTool(env: BuiltinEnv): ToolDefinition<StrReplaceEditorArgs> {
  return {
    name: 'str_replace_editor',
    description:
      'View, create and edit text files by absolute path. `view` shows a file with line numbers (or a directory two levels ' +
      'deep); `create` writes a new file and refuses an existing one; `str_replace` replaces `old_str`, which must occur exactly ' +
      'once, with `new_str` (whitespace counts: copy the text exactly, without the line numbers); `insert` puts `new_str` after ' +
      'line `insert_line` (0 for the top). Long views are clipped: ask for a view_range.',
    parameters: builtinParameters('str_replace_editor'),
    permission: { effects: 'fs', subject: (a) => ({ kind: 'path', value: a.path }) },
    async execute(args, ctx) {
      if (!isAbsolute(args.path))
        throw new ToolError(
          'EDITOR_RELATIVE_PATH',
          `the path ${args.path} is not absolute; str_replace_editor takes absolute paths, e.g. ${join(ctx.cwd, args.path)}`,
        );
      const shown = resolve(args.path);
      const fs = fsFor(ctx, env);
      switch (args.command) {
        case 'view': {
          const st = await fs.stat(args.path);
          if (st.type === 'directory') {
            if (args.view_range !== undefined)
              throw new ToolError('EDITOR_BAD_RANGE', `${shown} is a directory; view_range applies to files only`);
            return listTwoLevels(ctx, env, shown);
          }
          const file = await fs.read(args.path, { maxBytes: MAX_READ_BYTES });
          return numberedView(shown, file.text, args.view_range);
        }
        case 'create': {
          const text = required(args.file_text, 'file_text', 'create');
          const exists = await fs.stat(args.path).then(
            () => true,
            (e: unknown) => {
              if (e instanceof FsError && e.code === 'FS_NOT_FOUND') return false;
              throw e;
            },
          );
          if (exists) throw new ToolError('EDITOR_FILE_EXISTS', `${shown} already exists; create makes new files only (use str_replace)`);
          await fs.write(args.path, { content: text });
          return { content: `New file created successfully at: ${shown}`, meta: diffMeta(ctx.cwd, shown, '', text) };
        }
        case 'str_replace': {
          const old = required(args.old_str, 'old_str', 'str_replace');
          if (old === '') throw new ToolError('EDITOR_MISSING_PARAMETER', 'str_replace needs a non-empty `old_str`');
          const before = (await fs.read(args.path, { maxBytes: MAX_READ_BYTES })).text;
          const n = countOccurrences(before, old);
          if (n === 0)
            throw new FsError(
              'FS_EDIT_NOT_FOUND',
              `no replacement was made: old_str \`${old}\` does not occur verbatim in ${shown}. View the file and copy the text exactly`,
            );
          if (n > 1)
            throw new FsError(
              'FS_EDIT_AMBIGUOUS',
              `no replacement was made: old_str \`${old}\` occurs ${n} times, on lines [${occurrenceLines(before, old).join(', ')}] ` +
                `of ${shown}. Include more of the surrounding text to make it unique`,
            );
          // The seam re-reads and re-checks uniqueness as it writes: a change in between cannot slip through.
          const r = await fs.edit(args.path, { oldString: old, newString: args.new_str ?? '', replaceAll: false });
          return edited(ctx, shown, r.before, r.after);
        }
        case 'insert': {
          const at = required(args.insert_line, 'insert_line', 'insert');
          const text = required(args.new_str, 'new_str', 'insert');
          const before = (await fs.read(args.path, { maxBytes: MAX_READ_BYTES })).text;
          const lines = before.split('\n');
          if (at < 0 || at > lines.length)
            throw new ToolError('EDITOR_BAD_LINE', `insert_line ${at} is outside the file: use a line number from 0 to ${lines.length}`);
          const after = [...lines.slice(0, at), ...text.split('\n'), ...lines.slice(at)].join('\n');
          await fs.write(args.path, { content: after });
          return edited(ctx, shown, before, after);
        }
      }
    },
  };
}
