/**
 * The built-in tools' argument schemas, in zod: the source of truth for what each tool accepts.
 * Nothing on the start-up path imports this module (zod is a large import): the JSON Schemas
 * the model is shown are generated from it into `json-schemas.ts` (`npm run gen:tool-schemas`;
 * a test keeps the two equal), and the pipeline loads it to validate the first call's arguments.
 */
import { z } from 'zod';
import { DEFAULT_READ_LIMIT, DEFAULT_WAIT_MS } from './limits.js';

export const bashParams = z.object({
  command: z.string().min(1).describe('The bash command to execute.'),
  description: z
    .string()
    .optional()
    .describe('Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI).'),
  timeoutMs: z
    .number()
    .positive()
    .optional()
    .describe('Timeout in milliseconds. A default applies, and a cap; the command is killed on expiry.'),
  workdir: z
    .string()
    .optional()
    .describe('Working directory for this command. Defaults to the workspace root; a relative path resolves against it.'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Run in the background and return a job id immediately (collect with job_output, stop with job_kill). No timeout applies.'),
  sandbox_permissions: z
    .enum(['danger-full-access'])
    .optional()
    .describe('Ask to run this one command outside the file sandbox; needs approval. Give a justification.'),
  justification: z.string().optional().describe('Why this command needs to leave the sandbox (shown to the approver).'),
});
export type BashArgs = z.infer<typeof bashParams>;

const jobId = z.string().min(1).describe('Job id returned by the tool that started the background work.');

export const jobOutputParams = z.object({
  job_id: jobId,
  wait: z
    .boolean()
    .optional()
    .describe('Block until the job finishes or the timeout expires. A timed-out wait returns [status: running] and leaves the job alive.'),
  timeout_ms: z.number().positive().optional().describe(`Max wait in milliseconds (only with wait: true). Defaults to ${DEFAULT_WAIT_MS}.`),
});

export type JobOutputArgs = z.infer<typeof jobOutputParams>;

export const jobKillParams = z.object({
  job_id: jobId,
  reason: z.string().optional().describe('Optional short reason, recorded in the log.'),
});

export type JobKillArgs = z.infer<typeof jobKillParams>;

export const jobListParams = z.object({});

export const readParams = z.object({
  file_path: z.string().describe('Path to read: relative to the workspace root, or absolute inside it.'),
  offset: z.number().min(1).optional().describe('1-based first line to return. Defaults to 1.'),
  limit: z.number().min(1).optional().describe(`Maximum number of lines to return. Defaults to ${DEFAULT_READ_LIMIT}.`),
});
export type ReadArgs = z.infer<typeof readParams>;

export const globParams = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob pattern (e.g. "**/*.ts", "src/**/*.test.js"). A pattern with no "/" matches the basename at any depth; include a "/" ' +
        'to anchor it.',
    ),
  path: z.string().optional().describe('Directory to search in. Defaults to the workspace root; a relative path resolves against it.'),
});

export type GlobArgs = z.infer<typeof globParams>;

export const grepParams = z.object({
  pattern: z.string().min(1).describe('Regular expression to search for (ripgrep syntax).'),
  path: z.string().optional().describe('File or directory to search. Defaults to the workspace root; a relative path resolves against it.'),
  include: z
    .string()
    .optional()
    .describe('One glob filter for which files to search (e.g. "*.ts", "*.{js,jsx}"). Not a list; negation is not supported.'),
});

export type GrepArgs = z.infer<typeof grepParams>;

export const todoWriteParams = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().min(1).describe('What the task is: a short imperative line.'),
        status: z.enum(['pending', 'in_progress', 'completed']).describe('pending (not started) | in_progress (now) | completed (done).'),
      }),
    )
    .describe('The COMPLETE task list, replacing any previous list.'),
});

export type TodoWriteArgs = z.infer<typeof todoWriteParams>;

/** Accepted and ignored here: the permissions plugin reads them (an approved one-call escalation). */
const escalation = {
  sandbox_permissions: z
    .enum(['danger-full-access'])
    .optional()
    .describe('Request one-call escalation out of the sandbox; needs approval. Only with a justification.'),
  justification: z.string().optional().describe('Why the escalation is needed (shown to the approver).'),
};

export const writeParams = z.object({
  file_path: z.string().describe('Path to write: relative to the workspace root, or absolute inside it. Parent directories are created.'),
  content: z.string().describe('Full UTF-8 text content to write.'),
  ...escalation,
});

export type WriteArgs = z.infer<typeof writeParams>;

export const editParams = z.object({
  file_path: z.string().describe('Path to edit: relative to the workspace root, or absolute inside it.'),
  old_string: z.string().min(1).describe('Literal text to replace. Must match exactly, including whitespace.'),
  new_string: z.string().describe('Literal replacement text. Use an empty string to delete the match.'),
  replace_all: z.boolean().optional().describe('Replace all matches. Defaults to false; when false, old_string must appear exactly once.'),
  ...escalation,
});

export type EditArgs = z.infer<typeof editParams>;

/** The persistent shell's `bash` (the `minimal` tool set): the command only; state carries over. */
export const persistentBashParams = z.object({
  command: z.string().min(1).describe('The bash command to run in the persistent shell. Its stdin is empty (/dev/null).'),
  timeoutMs: z
    .number()
    .positive()
    .optional()
    .describe('Timeout in milliseconds. A default applies, and a cap; on expiry the shell is killed and the next call starts a new one.'),
});

export type PersistentBashArgs = z.infer<typeof persistentBashParams>;

export const strReplaceEditorParams = z.object({
  command: z.enum(['view', 'create', 'str_replace', 'insert']).describe('view | create | str_replace | insert.'),
  path: z.string().describe('Absolute path of the file or directory, inside the workspace.'),
  file_text: z.string().optional().describe('create: the content of the new file.'),
  old_str: z.string().optional().describe('str_replace: the exact text to replace; it must occur exactly once in the file.'),
  new_str: z.string().optional().describe('str_replace: the replacement (default empty). insert: the text to insert.'),
  insert_line: z.number().int().optional().describe('insert: the line after which new_str goes (0 puts it first).'),
  view_range: z
    .array(z.number().int())
    .optional()
    .describe('view of a file: [first, last] line numbers, 1-based and inclusive; last -1 means to the end.'),
});

export type StrReplaceEditorArgs = z.infer<typeof strReplaceEditorParams>;

/** Every built-in tool's schema, by tool name. */
export const BUILTIN_SCHEMAS = {
  bash: bashParams,
  job_output: jobOutputParams,
  job_kill: jobKillParams,
  job_list: jobListParams,
  read: readParams,
  write: writeParams,
  edit: editParams,
  glob: globParams,
  grep: grepParams,
  todo_write: todoWriteParams,
  persistent_bash: persistentBashParams,
  str_replace_editor: strReplaceEditorParams,
} as const;
