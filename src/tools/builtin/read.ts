/** `read`: a line window of a text file, numbered as dsh numbers it (`N: text`). */
import type { ToolDefinition } from '../types.js';
import { FsError } from '../fs/errors.js';
import { fsFor, shown, type BuiltinEnv } from './env.js';
import { DEFAULT_READ_LIMIT } from './limits.js';
import { builtinParameters } from './parameters.js';
import type { ReadArgs } from './schemas.js';

const MAX_LINE_CHARS = 2000;
const MAX_READ_BYTES = 16 * 1024 * 1024;

type Args = ReadArgs;

export function readTool(env: BuiltinEnv): ToolDefinition<Args> {
  return {
    name: 'read',
    description:
      'Read a UTF-8 text file and return line-numbered content (`N: text`). Use offset/limit to page through long files; a ' +
      'directory path lists its entries.',
    parameters: builtinParameters('read'),
    isConcurrencySafe: () => true,
    permission: { effects: 'none', subject: (a) => ({ kind: 'path', value: a.file_path }) },
    async execute(args, ctx) {
      const fs = fsFor(ctx, env);
      let file;
      try {
        file = await fs.read(args.file_path, { maxBytes: MAX_READ_BYTES });
      } catch (e) {
        if (!(e instanceof FsError && e.code === 'FS_IS_DIRECTORY')) throw e;

        const list = await fs.list(args.file_path, { recursive: false, gitignore: false, limit: 1000 });
        const names = list.entries.map((e) => (e.type === 'directory' ? `${e.path}/` : e.path));
        const more = list.truncated ? '\n(more entries not shown; use glob to search this directory)' : '';
        return (
          `<path>${await shown(ctx, list.path)}</path>\n<type>directory</type>\n<entries>\n` +
          `${names.join('\n') || '(empty directory)'}${more}\n</entries>`
        );
      }
      const lines = file.text.split('\n');
      if (lines.at(-1) === '') lines.pop(); // a final newline ends the last line; it is not a line of its own
      const total = lines.length;
      const offset = Math.floor(args.offset ?? 1);
      const limit = Math.floor(args.limit ?? DEFAULT_READ_LIMIT);
      const path = await shown(ctx, file.path);
      const head = `<path>${path}</path>\n<type>file</type>\n<content>\n`;
      if (total === 0) return { content: `${head}(File is empty)\n</content>`, meta: { path, offset, totalLines: 0, shownLines: 0 } };
      if (offset > total) {
        return {
          content:
            `${head}(offset ${offset} is past the end of the file - total ${total} lines. Use an offset between 1 and ${total}` +
            '.)\n</content>',
          meta: { path, offset, totalLines: total, shownLines: 0 },
        };
      }
      const end = Math.min(total, offset - 1 + limit);
      const body = lines
        .slice(offset - 1, end)
        .map((l, i) => {
          const t = l.endsWith('\r') ? l.slice(0, -1) : l;
          return `${offset + i}: ${t.length > MAX_LINE_CHARS ? `${t.slice(0, MAX_LINE_CHARS)}… (line truncated)` : t}`;
        })
        .join('\n');
      const foot =
        end < total
          ? `(Showing lines ${offset}-${end} of ${total}. Use offset=${end + 1} to continue.)`
          : `(End of file - total ${total} lines)`;
      return { content: `${head}${body}\n\n${foot}\n</content>`, meta: { path, offset, totalLines: total, shownLines: end - offset + 1 } };
    },
  };
}
