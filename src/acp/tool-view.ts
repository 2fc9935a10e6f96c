/**
 * How a tool call looks in an editor: its ACP kind, a one-line title, the files it touches, and
 * the diffs of an edit or a write. Read from the log only (the call's name and raw arguments, the
 * result's `meta.diffs`), so a history replay shows calls exactly as they looked live.
 */
import { isAbsolute, resolve } from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk/unstable';
import type { JsonValue } from '../model/json.js';

export function parseArgs(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const KINDS: Readonly<Record<string, ToolKind>> = {
  read: 'read',
  write: 'edit',
  edit: 'edit',
  glob: 'search',
  grep: 'search',
  bash: 'execute',
  job_output: 'execute',
  job_kill: 'execute',
  job_list: 'execute',
  todo_write: 'think',
};

export function toolKind(name: string): ToolKind {
  return KINDS[name] ?? 'other';
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** One line, at most `max` characters: titles are labels, not transcripts. */
function clip(s: string, max = 120): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function toolTitle(name: string, args: Record<string, unknown>): string {
  const path = str(args.file_path) ?? str(args.path);
  switch (name) {
    case 'bash': {
      const cmd = str(args.command);
      return clip(str(args.description) ?? (cmd ? `Run ${cmd}` : 'Run a command'));
    }
    case 'read':
      return clip(`Read ${path ?? 'a file'}`);
    case 'write':
      return clip(`Write ${path ?? 'a file'}`);
    case 'edit':
      return clip(`Edit ${path ?? 'a file'}`);
    case 'glob':
      return clip(`Find ${str(args.pattern) ?? 'files'}${path ? ` in ${path}` : ''}`);
    case 'grep':
      return clip(`Search for ${str(args.pattern) ?? 'a pattern'}${path ? ` in ${path}` : ''}`);
    case 'todo_write':
      return 'Update the plan';
    case 'job_output':
      return clip(`Output of ${str(args.job_id) ?? 'a background job'}`);
    case 'job_kill':
      return clip(`Stop ${str(args.job_id) ?? 'a background job'}`);
    case 'job_list':
      return 'List background jobs';
    default:
      return clip(name);
  }
}

function absolute(path: string, cwd: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** Files the call reads or changes, as absolute paths (the editor opens them). */
export function toolLocations(name: string, args: Record<string, unknown>, cwd: string): ToolCallLocation[] {
  const path = str(args.file_path) ?? (['glob', 'grep'].includes(name) ? str(args.path) : undefined);
  if (!path) return [];
  const abs = absolute(path, cwd);
  return [typeof args.offset === 'number' && name === 'read' ? { path: abs, line: args.offset } : { path: abs }];
}

/**
 * The diffs of a finished edit or write: the result's `meta.diffs` (old and new text, as the tool
 * recorded them); a write that created its file records none, so its diff is the new content.
 */
export function toolDiffs(name: string, args: Record<string, unknown>, meta: JsonValue | undefined, cwd: string): ToolCallContent[] {
  if (name !== 'edit' && name !== 'write') return [];
  const recorded = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as { diffs?: JsonValue }).diffs : undefined;
  const out: ToolCallContent[] = [];
  if (Array.isArray(recorded)) {
    for (const d of recorded) {
      if (typeof d !== 'object' || d === null || Array.isArray(d)) continue;
      if (typeof d.path !== 'string' || typeof d.newText !== 'string') continue;
      out.push({
        type: 'diff',
        path: absolute(d.path, cwd),
        oldText: typeof d.oldText === 'string' ? d.oldText : null,
        newText: d.newText,
      });
    }
  }
  const path = str(args.file_path);
  if (out.length === 0 && name === 'write' && path && typeof args.content === 'string')
    out.push({ type: 'diff', path: absolute(path, cwd), oldText: null, newText: args.content });
  return out;
}
