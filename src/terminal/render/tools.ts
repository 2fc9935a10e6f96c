/**
 * Tool calls by kind, from the recorded `tool/call` and `tool/result` events (nothing else: what
 * is shown is what the log holds):
 *
 *   edit, write   the path, `+added -removed` (`not applied` when the call failed), and the change
 *                 as a coloured unified diff: from the result's recorded whole-file texts when the
 *                 tool kept them (real line numbers), else from the call's arguments (the viewer's
 *                 inspector builds the same diffs)
 *   bash          the command, then exit status (or timeout, signal) and duration, then the tail
 *                 of the output: a few lines collapsed, up to a cap expanded
 *   read, grep,   one line: what was asked and how much came back
 *   glob
 *   any other     the name and a preview of the arguments
 *
 * An error shows its stable code and the first line of its message. Collapsed is the default;
 * `expanded` shows the whole diff and a longer output tail.
 */
import type { SessionEvent } from '../../session/events.js';
import type { JsonValue } from '../../model/json.js';
import { escapeCommand } from '../../model/unsafe-chars.js';
import { diffOf, editDiffs, type EditDiff } from '../../query/edit-diffs.js';
import { paint, span, type RenderOptions, type Span, type SpanLine, type StyleName } from './style.js';
import { clipSpans, graphemes, safeProse, safeText, spansWidth, textWidth } from './width.js';
import { elapsed } from './units.js';

/** One call as the renderers need it: the call, and its result once there is one. */
export interface ToolCallView {
  name: string;
  /** The model's raw JSON text. */
  arguments: string;
  startedAt?: number;
  result?: {
    isError: boolean;
    /** The result's text blocks joined (what the model was shown). */
    text: string;
    errorCode?: string | undefined;
    meta?: JsonValue | undefined;
    endedAt?: number;
  };
}

export interface ToolRenderOptions extends RenderOptions {
  /** Whole diff, longer output tail. */
  expanded?: boolean;
}

/** Output lines of a bash call shown collapsed / expanded. */
export const BASH_TAIL = { collapsed: 5, expanded: 200 } as const;
/** Diff lines shown collapsed / expanded. */
export const DIFF_LINES = { collapsed: 24, expanded: 2000 } as const;

/** The view of a call from its events (`result` absent while it runs). */
export function toolCallView(call: SessionEvent<'tool/call'>, result?: SessionEvent<'tool/result'>): ToolCallView {
  const v: ToolCallView = { name: call.data.name, arguments: call.data.arguments, startedAt: call.time };
  if (result) {
    const block = result.data.message.content[0];
    const text = (block?.content ?? []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
    v.result = { isError: block?.isError === true, text, errorCode: result.data.error?.code, meta: result.data.meta, endedAt: result.time };
  }
  return v;
}

function argsOf(v: ToolCallView): Record<string, unknown> {
  try {
    const a = JSON.parse(v.arguments) as unknown;
    return a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function str(a: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const n of names) if (typeof a[n] === 'string') return a[n] as string;
  return undefined;
}

function obj(v: JsonValue | undefined): Record<string, JsonValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, JsonValue>) : {};
}

function num(v: JsonValue | undefined): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The glyph before a call: pending, done, failed. */
function bullet(v: ToolCallView): Span {
  if (!v.result) return span('● ', 'yellow');
  return v.result.isError ? span('● ', 'red') : span('● ', 'green');
}

function durationOf(v: ToolCallView): string | undefined {
  return v.result?.endedAt !== undefined && v.startedAt !== undefined ? elapsed(v.result.endedAt - v.startedAt) : undefined;
}

/** `✗ CODE: first line of the message`. */
function errorLine(v: ToolCallView): SpanLine[] {
  const r = v.result;
  if (!r?.isError) return [];
  const first =
    r.text
      .replace(/^Error:\s*/, '')
      .split('\n')
      .find((l) => l.trim() !== '') ?? '';
  const code = r.errorCode ?? 'error';
  return [[span('  ✗ ', 'red'), span(safeText(code), 'red', 'bold'), span(first ? `: ${safeText(first.trim())}` : '', 'red')]];
}

function header(v: ToolCallView, name: string, subject: string, extra: Span[] = [], show = safeText): SpanLine {
  const line: SpanLine = [bullet(v), span(safeText(name), 'bold')];
  if (subject) line.push(span(' '), span(show(subject), 'cyan'));
  return [...line, ...extra];
}

// ---------------------------------------------------------------------------------------------
// edit / write

/** The diffs to show: the result's recorded texts when the tool kept them, else the call's arguments. */
export function diffsOf(v: ToolCallView): EditDiff[] {
  const kind: EditDiff['kind'] = v.name.toLowerCase() === 'write' ? 'write' : 'edit';
  const recorded = obj(v.result?.meta).diffs;
  if (Array.isArray(recorded) && recorded.length > 0) {
    const out: EditDiff[] = [];
    for (const d of recorded) {
      const o = obj(d);
      if (typeof o.path === 'string' && typeof o.oldText === 'string' && typeof o.newText === 'string')
        out.push(diffOf(o.path, kind, o.oldText, o.newText));
    }
    if (out.length > 0) return out;
  }
  return editDiffs(v.name, v.arguments);
}

function diffLines(diffs: EditDiff[], limit: number): SpanLine[] {
  const out: SpanLine[] = [];
  let total = 0;
  for (const d of diffs) {
    if (d.tooLarge) {
      out.push([span('  (too large to diff)', 'dim')]);
      continue;
    }
    for (const h of d.hunks) {
      // "\ No newline at end of file" says nothing to a reader of an edit; it is left out.
      const lines = h.lines.filter((l) => !l.startsWith('\\'));
      total += 1 + lines.length;
      if (out.length >= limit) continue;
      out.push([span(`  @@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, 'cyan', 'dim')]);
      for (const l of lines) {
        if (out.length >= limit) break;
        const style: StyleName = l.startsWith('+') ? 'green' : l.startsWith('-') ? 'red' : 'dim';
        out.push([span('  '), span(safeText(l), style)]);
      }
    }
  }
  if (total > out.length) out.push([span(`  … ${plural(total - out.length, 'more line')}`, 'dim')]);
  return out;
}

function editLines(v: ToolCallView, opts: ToolRenderOptions): SpanLine[] {
  const a = argsOf(v);
  const diffs = diffsOf(v);
  const path = diffs[0]?.path ?? str(a, 'file_path', 'path', 'filePath') ?? '';
  let added = 0;
  let removed = 0;
  for (const d of diffs)
    for (const h of d.hunks)
      for (const l of h.lines) {
        if (l.startsWith('+')) added++;
        else if (l.startsWith('-')) removed++;
      }
  // A call that failed changed nothing: the lines it asked for are not counts of a change.
  const counts: Span[] = v.result?.isError
    ? [span(' not applied', 'dim')]
    : diffs.length > 0
      ? [span(' '), span(`+${added}`, 'green'), span(' '), span(`-${removed}`, 'red')]
      : [];
  const out = [header(v, v.name, path, counts), ...errorLine(v)];
  if (!v.result?.isError) out.push(...diffLines(diffs, opts.expanded ? DIFF_LINES.expanded : DIFF_LINES.collapsed));
  return out;
}

// ---------------------------------------------------------------------------------------------
// bash

/** A file the call's full output was saved to (the result's meta names it; the text's note says how much was left out). */
interface Spill {
  stream: 'stdout' | 'stderr' | 'output';
  path: string;
  omittedBytes?: number;
}

/** The spill files a bash result names in its meta (`bash`: stdoutSpill/stderrSpill; the persistent shell: outputSpill). */
function spillsOf(meta: Record<string, JsonValue>): Spill[] {
  const out: Spill[] = [];
  for (const [key, stream] of [
    ['stdoutSpill', 'stdout'],
    ['stderrSpill', 'stderr'],
    ['outputSpill', 'output'],
  ] as const) {
    const path = meta[key];
    if (typeof path === 'string' && path !== '') out.push({ stream, path });
  }
  return out;
}

/**
 * The output without bash's own closing notes (`[exit code: N]`, `[timed out …]`: the status line
 * says them; `(Omitted … Full output saved to: PATH …)`: shown apart, whole, by `spillLines`).
 */
function bashOutput(text: string, spills: Spill[]): string[] {
  const lines = text.replace(/\n+$/, '').split('\n');
  for (const s of spills) {
    // The last line that names this file is the tool's note (the output itself could print the words).
    const i = lines.findLastIndex((l) => l.includes(`Full output saved to: ${s.path}.`));
    if (i < 0) continue;
    const bytes = /^\(Omitted (\d+) bytes\b/.exec(lines[i]!)?.[1];
    if (bytes !== undefined) s.omittedBytes = Number(bytes);
    lines.splice(i, 1);
  }
  while (lines.length > 0 && /^\[(exit code: -?\d+|timed out after .*|killed by signal .*)\]$/.test(lines.at(-1)!)) lines.pop();
  if (lines.length === 1 && lines[0] === '(no output)') return [];
  return lines;
}

/**
 * Where the full output was saved, the path never clipped: it is the one thing a reader of a cut
 * output needs, so it is broken between graphemes over as many lines as the width asks.
 */
function spillLines(spills: readonly Spill[], width: number): SpanLine[] {
  const out: SpanLine[] = [];
  const indent = width > 8 ? '    ' : '';
  const room = Math.max(1, width - indent.length);
  for (const s of spills) {
    const what = s.omittedBytes !== undefined ? `${s.omittedBytes} bytes of ${s.stream} not shown` : `${s.stream} cut`;
    out.push([span(`  ${what}; all of it saved to:`, 'dim')]);
    let row = '';
    let used = 0;
    for (const g of graphemes(safeText(s.path))) {
      const w = textWidth(g);
      if (used + w > room && row !== '') {
        out.push([span(indent), span(row, 'cyan')]);
        row = '';
        used = 0;
      }
      row += g;
      used += w;
    }
    out.push([span(indent), span(row, 'cyan')]);
  }
  return out;
}

/** A line of a command: NBSP and the other lookalike spaces as escapes too (`rm\xa0-rf`), a tab as spaces. */
function safeCommand(s: string): string {
  return escapeCommand(s.includes('\t') ? s.replace(/\t/g, '    ') : s);
}

function bashLines(v: ToolCallView, opts: ToolRenderOptions): SpanLine[] {
  const a = argsOf(v);
  const command = str(a, 'command') ?? '';
  const cmdLines = command.split('\n');
  const out: SpanLine[] = [
    header(v, v.name, cmdLines[0] ?? '', cmdLines.length > 1 ? [span(` (+${cmdLines.length - 1} lines)`, 'dim')] : [], safeCommand),
  ];
  const r = v.result;
  if (!r) {
    out.push([span('  running…', 'dim')]);
    return out;
  }
  const meta = obj(r.meta);
  const dur = durationOf(v);
  const status: Span[] = [];
  const exit = num(meta.exitCode);
  if (meta.timedOut === true) status.push(span('timed out', 'red'));
  else if (typeof meta.signal === 'string') status.push(span(`killed by ${meta.signal}`, 'red'));
  else if (exit !== undefined) status.push(span(`exit ${exit}`, exit === 0 ? 'green' : 'red'));
  else if (typeof meta.jobId === 'string') status.push(span(`background job ${safeText(meta.jobId)}`, 'cyan'));
  if (dur) status.push(span(`${status.length > 0 ? ' · ' : ''}${dur}`, 'dim'));
  if (r.isError && r.errorCode && meta.timedOut !== true) out.push(...errorLine(v));
  else if (status.length > 0) out.push([span('  '), ...status]);
  const spills = spillsOf(meta);
  const lines = r.isError && r.errorCode && meta.timedOut !== true ? [] : bashOutput(r.text, spills);
  const keep = opts.expanded ? BASH_TAIL.expanded : BASH_TAIL.collapsed;
  if (lines.length > keep) out.push([span(`  … ${plural(lines.length - keep, 'line')} above`, 'dim')]);
  for (const l of lines.slice(-keep)) out.push([span('  │ ', 'dim'), span(safeProse(l))]);
  out.push(...spillLines(spills, Math.max(1, opts.width)));
  return out;
}

// ---------------------------------------------------------------------------------------------
// read / grep / glob / others

function summaryLines(v: ToolCallView): SpanLine[] {
  const a = argsOf(v);
  const meta = obj(v.result?.meta);
  const ok = v.result && !v.result.isError;
  const note = (text: string): Span[] => (ok ? [span(` · ${text}`, 'dim')] : []);
  const where = (p: string | undefined): string => (p ? ` in ${p}` : '');
  switch (v.name) {
    case 'read': {
      const offset = typeof a.offset === 'number' ? a.offset : undefined;
      const limit = typeof a.limit === 'number' ? a.limit : undefined;
      const range =
        offset !== undefined || limit !== undefined ? ` (from line ${offset ?? 1}${limit !== undefined ? `, ${limit} lines` : ''})` : '';
      const shown = num(meta.shownLines);
      const total = num(meta.totalLines);
      const got =
        shown !== undefined && total !== undefined ? (shown === total ? plural(total, 'line') : `${shown} of ${total} lines`) : '';
      return [header(v, 'read', `${str(a, 'file_path', 'path') ?? ''}${range}`, got ? note(got) : []), ...errorLine(v)];
    }
    case 'grep': {
      const total = num(meta.total);
      const files = Array.isArray(meta.files) ? meta.files.length : undefined;
      const include = str(a, 'include');
      const got =
        total === undefined
          ? ''
          : total === 0
            ? 'no matches'
            : `${plural(total, 'match', 'matches')}${files ? ` in ${plural(files, 'file')}` : ''}`;
      return [
        header(v, 'grep', `/${str(a, 'pattern') ?? ''}/${where(str(a, 'path'))}${include ? ` (${include})` : ''}`, got ? note(got) : []),
        ...errorLine(v),
      ];
    }
    case 'glob': {
      const total = num(meta.total);
      const got = total === undefined ? '' : total === 0 ? 'no files' : plural(total, 'file');
      return [header(v, 'glob', `${str(a, 'pattern') ?? ''}${where(str(a, 'path'))}`, got ? note(got) : []), ...errorLine(v)];
    }
    default: {
      const preview = v.arguments.replace(/\s+/g, ' ').trim();
      return [header(v, v.name, '', preview && preview !== '{}' ? [span(' '), span(safeText(preview), 'dim')] : []), ...errorLine(v)];
    }
  }
}

/** What kind of view a tool gets. */
export function toolKind(name: string): 'diff' | 'bash' | 'summary' {
  const n = name.toLowerCase();
  if (['edit', 'write', 'multiedit', 'str_replace_based_edit_tool'].includes(n)) return 'diff';
  if (n === 'bash') return 'bash';
  return 'summary';
}

/** A call (running or done) as lines of at most `opts.width` columns. */
export function renderTool(v: ToolCallView, opts: ToolRenderOptions): string[] {
  const kind = toolKind(v.name);
  const lines = kind === 'diff' ? editLines(v, opts) : kind === 'bash' ? bashLines(v, opts) : summaryLines(v);
  const width = Math.max(1, opts.width);
  return lines.map((l) => paint(spansWidth(l) > width ? clipSpans(l, width, true) : l, opts.color));
}
