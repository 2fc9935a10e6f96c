/** `write` (create or replace a file) and `edit` (exact string replacement). */
import { z } from 'zod';
import type { JsonValue } from '../../model/json.js';
import type { ToolDefinition } from '../types.js';
import { workspaceRelative } from '../fs/paths.js';
import { fsFor, shown, type BuiltinEnv } from './env.js';

/** Diffs bigger than this are not kept in the log (the file itself is the record). */
const DIFF_BASIS_LIMIT = 64 * 1024;

function diffMeta(root: string, path: string, oldText: string | undefined, newText: string): JsonValue {
  if (oldText === undefined || oldText.length + newText.length > DIFF_BASIS_LIMIT) return { diffs: [] };
  return { diffs: [{ path: workspaceRelative(root, path), oldText, newText }] };
}

/** Accepted and ignored here: the permissions plugin reads them (an approved one-call escalation). */
const escalation = {
  sandbox_permissions: z
    .enum(['danger-full-access'])
    .optional()
    .describe('Request one-call escalation out of the sandbox; needs approval. Only with a justification.'),
  justification: z.string().optional().describe('Why the escalation is needed (shown to the approver).'),
};

const writeParams = z.object({
  file_path: z.string().describe('Path to write: relative to the workspace root, or absolute inside it. Parent directories are created.'),
  content: z.string().describe('Full UTF-8 text content to write.'),
  ...escalation,
});

export function writeTool(env: BuiltinEnv): ToolDefinition<z.infer<typeof writeParams>> {
  return {
    name: 'write',
    description: 'Create or fully replace a UTF-8 text file. To change part of an existing file, prefer edit.',
    parameters: writeParams,
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

const editParams = z.object({
  file_path: z.string().describe('Path to edit: relative to the workspace root, or absolute inside it.'),
  old_string: z.string().min(1).describe('Literal text to replace. Must match exactly, including whitespace.'),
  new_string: z.string().describe('Literal replacement text. Use an empty string to delete the match.'),
  replace_all: z.boolean().optional().describe('Replace all matches. Defaults to false; when false, old_string must appear exactly once.'),
  ...escalation,
});

export function editTool(env: BuiltinEnv): ToolDefinition<z.infer<typeof editParams>> {
  return {
    name: 'edit',
    description:
      'Edit an existing UTF-8 text file by replacing literal text. Refused unless old_string occurs exactly once, or replace_all is true.',
    parameters: editParams,
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
