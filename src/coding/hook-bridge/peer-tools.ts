/**
 * dsh's tool calls as Claude Code and Codex hook scripts know them. A team's hooks test the tool
 * by name, in the matcher (`Edit|Write|MultiEdit`, Codex's `^apply_patch$`) and often again in the
 * script (`.tool_name == "Bash"`), and read the arguments by the peer's field names
 * (`.tool_input.file_path`). A call they did not recognise would pass unchecked, so each of dsh's
 * tools is given:
 *
 * - `subjects`: every name a matcher is tested against: dsh's own, the Claude Code tool it stands
 *   for, and in the Codex dialect Codex's (`Bash`; `apply_patch` with its matcher aliases `Edit`
 *   and `Write` for a file change). A superset on purpose: a hook that runs once too often is
 *   visible, one that never runs is a guard silently off.
 * - `toolName` / `toolInput`: what the script reads on stdin, in the dialect's own shape: Claude
 *   Code `Bash {command, description, timeout, run_in_background}`, `Read {file_path, offset,
 *   limit}`, `Write {file_path, content}`, `Edit {file_path, old_string, new_string, replace_all}`,
 *   `Glob {pattern, path}`, `Grep {pattern, path, glob}`; Codex `Bash {command}` and
 *   `apply_patch {command: PATCH}` (the change written as a Codex patch: `*** Add File: P` or
 *   `*** Update File: P` and its lines). A tool the peer has no counterpart for keeps dsh's name
 *   and arguments.
 *
 * `str_replace_editor` (the `minimal` tool set) is mapped by its `command`: `view` is a Read,
 * `create` a Write, `str_replace` and `insert` Edits (an insert has an empty `old_string` and its
 * `insert_line`), with its `path` as `file_path`.
 */
import type { HookDialect } from './config.js';

export interface PeerCall {
  /** Names a matcher is tested against, dsh's own first. */
  subjects: string[];
  /** `tool_name` on the hook's stdin. */
  toolName: string;
  /** `tool_input` on the hook's stdin. */
  toolInput: unknown;
}

type Args = Record<string, unknown>;

/** Claude Code's name for each of dsh's tools whose arguments need no reshaping beyond renames. */
const CLAUDE_CODE: Record<string, { name: string; also?: string[]; rename?: Record<string, string> }> = {
  bash: { name: 'Bash', also: ['shell'], rename: { timeoutMs: 'timeout' } },
  read: { name: 'Read' },
  write: { name: 'Write' },
  edit: { name: 'Edit', also: ['MultiEdit'] },
  glob: { name: 'Glob' },
  grep: { name: 'Grep', rename: { include: 'glob' } },
  todo_write: { name: 'TodoWrite' },
  web_fetch: { name: 'WebFetch' },
};

/** Codex's file-change tool and the names its matchers also accept for it. */
const CODEX_PATCH = ['apply_patch', 'Edit', 'Write'];

/** A file change, said once for both dialects. */
interface FileChange {
  kind: 'write' | 'edit';
  path: string;
  content?: string;
  oldString?: string;
  newString?: string;
}

export function peerCall(dialect: HookDialect, name: string, input: unknown): PeerCall {
  const args: Args = typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Args) : {};
  const asIs: PeerCall = { subjects: [name], toolName: name, toolInput: input };
  const cc = claudeCode(name, args);
  if (!cc) return asIs;
  const subjects = unique([name, cc.toolName, ...cc.also]);
  if (dialect === 'claude-code') return { subjects, toolName: cc.toolName, toolInput: cc.toolInput };
  if (name === 'bash') return { subjects, toolName: 'Bash', toolInput: { command: args.command } };
  if (cc.change)
    return { subjects: unique([...subjects, ...CODEX_PATCH]), toolName: 'apply_patch', toolInput: { command: codexPatch(cc.change) } };
  // Codex has no counterpart (it reads and searches through its shell): dsh's own call.
  return { ...asIs, subjects };
}

interface ClaudeCodeCall {
  toolName: string;
  also: string[];
  toolInput: Args;
  change?: FileChange;
}

function claudeCode(name: string, args: Args): ClaudeCodeCall | undefined {
  if (name === 'str_replace_editor') return editorCall(args);
  const peer = CLAUDE_CODE[name];
  if (!peer) return undefined;
  const toolInput: Args = {};
  for (const [k, v] of Object.entries(args)) toolInput[peer.rename?.[k] ?? k] = v;
  const out: ClaudeCodeCall = { toolName: peer.name, also: peer.also ?? [], toolInput };
  const path = str(args.file_path);
  if (name === 'write') out.change = { kind: 'write', path, content: str(args.content) };
  if (name === 'edit') out.change = { kind: 'edit', path, oldString: str(args.old_string), newString: str(args.new_string) };
  return out;
}

function editorCall(args: Args): ClaudeCodeCall {
  const path = str(args.path);
  switch (args.command) {
    case 'view': {
      const input: Args = { file_path: path };
      const range = args.view_range;
      if (Array.isArray(range) && typeof range[0] === 'number') {
        input.offset = range[0];
        if (typeof range[1] === 'number' && range[1] >= range[0]) input.limit = range[1] - range[0] + 1;
      }
      return { toolName: 'Read', also: [], toolInput: input };
    }
    case 'create':
      return {
        toolName: 'Write',
        also: [],
        toolInput: { file_path: path, content: str(args.file_text) },
        change: { kind: 'write', path, content: str(args.file_text) },
      };
    case 'insert':
      return {
        toolName: 'Edit',
        also: ['MultiEdit'],
        toolInput: { file_path: path, old_string: '', new_string: str(args.new_str), insert_line: args.insert_line },
        change: { kind: 'edit', path, oldString: '', newString: str(args.new_str) },
      };
    default:
      // str_replace, and anything else the tool will refuse: treated as the edit it most likely is.
      return {
        toolName: 'Edit',
        also: ['MultiEdit'],
        toolInput: { file_path: path, old_string: str(args.old_str), new_string: str(args.new_str), replace_all: false },
        change: { kind: 'edit', path, oldString: str(args.old_str), newString: str(args.new_str) },
      };
  }
}

/** The change as a Codex patch, which Codex hooks read from `tool_input.command`. */
export function codexPatch(c: FileChange): string {
  const lines = (text: string, mark: string): string[] => {
    if (text === '') return [];
    const all = text.split('\n');
    if (all.at(-1) === '') all.pop();
    return all.map((l) => mark + l);
  };
  const body =
    c.kind === 'write'
      ? [`*** Add File: ${c.path}`, ...lines(c.content ?? '', '+')]
      : [`*** Update File: ${c.path}`, '@@', ...lines(c.oldString ?? '', '-'), ...lines(c.newString ?? '', '+')];
  return ['*** Begin Patch', ...body, '*** End Patch', ''].join('\n');
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const unique = (xs: string[]): string[] => [...new Set(xs)];
