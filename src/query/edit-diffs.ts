/**
 * Edits and writes as line diffs, built from a recorded call's arguments alone (the `diff`
 * package): the log holds the call, so the change it asked for can be shown without the file.
 * The viewer's inspector and the terminal renderers both show these.
 */
import { structuredPatch } from 'diff';

/** Longest line kept in a hunk. */
const LINE_CAP = 20_000;
/** Longest side of a diff: a diff is quadratic at worst, and no reader can take in more anyway. */
const DIFF_CAP = 200_000;

/** One line of a diff hunk: ` ` kept, `+` added, `-` removed. */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface EditDiff {
  path: string;
  /** `edit`: old_string → new_string; `write`: the content written (as all new: the log has no file before it). */
  kind: 'edit' | 'write';
  hunks: DiffHunk[];
  /** Set when the texts were too long to diff. */
  tooLarge?: true;
}

/** `before` → `after` as the hunks of a unified diff (3 lines of context). */
export function diffOf(path: string, kind: EditDiff['kind'], before: string, after: string): EditDiff {
  if (before.length > DIFF_CAP || after.length > DIFF_CAP) return { path, kind, hunks: [], tooLarge: true };
  const p = structuredPatch(path, path, before, after, '', '', { context: 3 });
  return { path, kind, hunks: p.hunks.map((h) => ({ ...h, lines: h.lines.map((l) => l.slice(0, LINE_CAP)) })) };
}

function strField(o: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const n of names) if (typeof o[n] === 'string') return o[n] as string;
  return undefined;
}

/**
 * The diffs an edit or write call's arguments describe: dsh's `edit` / `write` and the same-named
 * tools of other agents (Claude Code's `Edit`, `MultiEdit`, `Write`). Other calls, and arguments
 * that are not a JSON object, give none.
 */
export function editDiffs(name: string | undefined, args: string): EditDiff[] {
  const tool = (name ?? '').toLowerCase();
  if (!['edit', 'write', 'multiedit', 'str_replace_based_edit_tool'].includes(tool)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return [];
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  const a = parsed as Record<string, unknown>;
  const path = strField(a, 'file_path', 'path', 'filePath') ?? '(no path)';
  if (tool === 'write') {
    const content = strField(a, 'content');
    return content === undefined ? [] : [diffOf(path, 'write', '', content)];
  }
  if (tool === 'multiedit' && Array.isArray(a.edits)) {
    const out: EditDiff[] = [];
    for (const e of a.edits.slice(0, 50)) {
      if (e === null || typeof e !== 'object') continue;
      const o = e as Record<string, unknown>;
      const before = strField(o, 'old_string');
      const after = strField(o, 'new_string');
      if (before !== undefined && after !== undefined) out.push(diffOf(path, 'edit', before, after));
    }
    return out;
  }
  const before = strField(a, 'old_string', 'old_str', 'oldText');
  const after = strField(a, 'new_string', 'new_str', 'newText');
  return before !== undefined && after !== undefined ? [diffOf(path, 'edit', before, after)] : [];
}
