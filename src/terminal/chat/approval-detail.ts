/**
 * What an approval question shows of the call: every argument that decides whether to allow it,
 * in full. A person must never approve a command they could not read, so nothing here is cut: a
 * multi-line command keeps each of its lines, and the prompt wraps (and, when taller than the
 * screen, pages) the rows instead of clipping them. The text a `write` or `edit` puts in a file
 * (`content`, `old_string`, `new_string`) is shown whole too, every line, under a `lines, bytes`
 * header: the diff drawn above the question is cut at 24 lines (2,000 with Ctrl-O) and may have
 * scrolled away, so a dangerous line 70 of an 80-line `.envrc` must be read here before the
 * choices open (issue 15 second review, N5).
 *
 * Every character is made visible as in the rest of the screen (the shared unsafe table: ESC,
 * bidi controls, zero-width characters as escapes), and a tab as `\x09`, so a command awaiting
 * approval and the one that would run cannot look alike.
 */
import { escapeCommand, escapeUnsafeChar } from '../../model/unsafe-chars.js';
import { graphemes, textWidth } from '../render/width.js';

/** One line of the call as shown: a label (`workdir:`) and text, or a line of a multi-line value. */
export interface DetailRow {
  /** `key: value` rows carry the key; rows of a multi-line value (a command's lines) carry none. */
  label?: string;
  text: string;
}

/** The file text of a call, per tool: shown line by line under a `lines, bytes` header. */
const FILE_TEXT: Readonly<Record<string, readonly string[]>> = {
  write: ['content'],
  edit: ['old_string', 'new_string'],
};

/** Shown first, as the call's subject. */
const SUBJECT_KEYS = ['command', 'file_path', 'path', 'pattern'] as const;

/**
 * Visible text of one line: the unsafe table as escapes, the spaces that pass for U+0020 (NBSP,
 * U+2000–200A, …: `escapeCommand`) too, and a tab as `\x09`.
 */
export function visibleLine(s: string): string {
  const t = escapeCommand(s);
  return t.includes('\t') ? t.replace(/\t/g, escapeUnsafeChar('\t')) : t;
}

function lineCount(s: string): number {
  if (s === '') return 0;
  return s.split('\n').length - (s.endsWith('\n') ? 1 : 0);
}

/**
 * A file text: a `N lines, B bytes` row (`, no newline at the end` when the last line has none),
 * then each line on a row of its own. A final newline ends the last line; it adds no empty row.
 */
function fileTextRows(key: string, s: string): DetailRow[] {
  const n = lineCount(s);
  const bytes = Buffer.byteLength(s, 'utf8');
  const plural = (k: number, what: string): string => `${k} ${what}${k === 1 ? '' : 's'}`;
  const open = n > 0 && !s.endsWith('\n') ? ', no newline at the end' : '';
  const lines = n === 0 ? [] : s.split('\n').slice(0, n);
  return [
    { label: key, text: `${plural(n, 'line')}, ${plural(bytes, 'byte')}${open}${n > 0 ? ':' : ''}` },
    ...lines.map((l) => ({ text: visibleLine(l) })),
  ];
}

/** The rows of one argument: `key: value` for one line, `key:` then each line for more. */
function rowsOf(key: string, value: unknown): DetailRow[] {
  if (typeof value !== 'string') {
    let text: string;
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
    return [{ label: key, text: visibleLine(text) }];
  }
  const lines = value.split('\n');
  if (lines.length === 1) return [{ label: key, text: visibleLine(value) }];
  return [{ label: key, text: `${lines.length} lines:` }, ...lines.map((l) => ({ text: visibleLine(l) }))];
}

/**
 * The rows for a call: the command (each of its lines on a row of its own, with no label), then
 * every other argument. Arguments that are not a JSON object are shown as their raw text.
 */
export function approvalDetail(toolName: string, args: unknown): DetailRow[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    const raw = typeof args === 'string' ? args : (JSON.stringify(args) ?? String(args));
    return raw.split('\n').map((l) => ({ text: visibleLine(l) }));
  }
  const a = args as Record<string, unknown>;
  const fileText = FILE_TEXT[toolName] ?? [];
  const keys = [...SUBJECT_KEYS.filter((k) => k in a), ...Object.keys(a).filter((k) => !(SUBJECT_KEYS as readonly string[]).includes(k))];
  const rows: DetailRow[] = [];
  for (const k of keys) {
    const v = a[k];
    if (toolName === 'bash' && k === 'command' && typeof v === 'string') rows.push(...v.split('\n').map((l) => ({ text: visibleLine(l) })));
    else if (fileText.includes(k) && typeof v === 'string') rows.push(...fileTextRows(k, v));
    else rows.push(...rowsOf(k, v));
  }
  return rows;
}

/**
 * `text` cut into rows of at most `width` columns, between grapheme clusters and never elsewhere
 * (no word wrap: a command's spaces are part of it, and none may vanish at a row's end).
 */
export function hardWrap(text: string, width: number): string[] {
  const w = Math.max(1, width);
  if (textWidth(text) <= w) return [text];
  const rows: string[] = [];
  let cur = '';
  let used = 0;
  for (const g of graphemes(text)) {
    const gw = textWidth(g);
    if (used + gw > w && cur !== '') {
      rows.push(cur);
      cur = '';
      used = 0;
    }
    cur += g;
    used += gw;
  }
  rows.push(cur);
  return rows;
}

/**
 * The rows on screen for `width` columns: a value's line starts with `│ `, the rows it wraps onto
 * with `┆ `, so a wrapped row is never taken for a new line of the command.
 */
export function layoutDetail(rows: readonly DetailRow[], width: number): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const text = r.label === undefined ? r.text : `${r.label}: ${r.text}`;
    const parts = hardWrap(text, Math.max(1, width - 4));
    parts.forEach((p, i) => out.push(`  ${i === 0 ? '│' : '┆'} ${p}`));
  }
  return out;
}
