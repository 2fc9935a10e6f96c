/** `write` (create or replace a file) and `edit` (exact string replacement). */
import type { JsonValue } from '../../model/json.js';
import type { ToolDefinition } from '../types.js';
import { workspaceRelative } from '../fs/paths.js';
import { fsFor, shown, type BuiltinEnv } from './env.js';
import { builtinParameters } from './parameters.js';
import type { EditArgs, WriteArgs } from './schemas.js';

/** Diffs bigger than this are not kept in the log (the file itself is the record). */
const DIFF_BASIS_LIMIT = 64 * 1024;

export function diffMeta(root: string, path: string, oldText: string | undefined, newText: string): JsonValue {
  if (oldText === undefined || oldText.length + newText.length > DIFF_BASIS_LIMIT) return { diffs: [] };
  return { diffs: [{ path: workspaceRelative(root, path), oldText, newText }] };
}

export function writeTool(env: BuiltinEnv): ToolDefinition<WriteArgs> {
  return {
    name: 'write',
    description: 'Create or fully replace a UTF-8 text file. To change part of an existing file, prefer edit.',
    parameters: builtinParameters('write'),
    permission: { effects: 'fs', subject: (a) => ({ kind: 'path', value: a.file_path }) },
    async execute(args, ctx) {
      const r = await fsFor(ctx, env).write(args.file_path, { content: args.content });
      const path = await shown(ctx, r.path);
      return {
        content: `<path>${path}</path>\n<type>file</type>\n<content>\n${r.created ? 'Created file' : 'Updated file'}\n</content>`,
        meta: diffMeta(ctx.cwd, path, r.created ? undefined : r.previous, args.content),
      };
    },
  };
}

export function editTool(env: BuiltinEnv): ToolDefinition<EditArgs> {
  return {
    name: 'edit',
    description:
      'Edit an existing UTF-8 text file by replacing literal text. Refused unless old_string occurs exactly once, or replace_all is true.',
    parameters: builtinParameters('edit'),
    permission: { effects: 'fs', subject: (a) => ({ kind: 'path', value: a.file_path }) },
    async execute(args, ctx) {
      const r = await fsFor(ctx, env).edit(args.file_path, {
        oldString: args.old_string,
        newString: args.new_string,
        replaceAll: args.replace_all === true,
      });
      const path = await shown(ctx, r.path);
      const n = r.replacements > 1 ? ` (${r.replacements} replacements)` : '';
      return { content: `The file ${path} has been updated successfully.${n}`, meta: diffMeta(ctx.cwd, path, r.before, r.after) };
    },
  };
}
