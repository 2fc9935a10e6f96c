/**
 * `dsh log show <file>`: the log as a timeline. Turns and steps are indented, stream chunk runs
 * collapsed to counts, messages, tool calls and results, request headers, retries, inbox
 * splices and plugin events one line each (assistant blocks on their own lines).
 */
import { CliError, EXIT_OK } from '../errors.js';
import { DEFAULT_WIDTHS, FULL_WIDTHS } from '../format.js';
import type { Io, Output } from '../output.js';
import { readLog, type CliLog } from '../read-log.js';
import { summarize } from '../summary.js';
import { isoTime, oneLine, plural } from '../text.js';
import { eachEntry, lastEntrySeq, turnRange, type Entry, type Tone } from './timeline.js';

export interface ShowOptions {
  turn?: number;
  full?: boolean;
}

const TONE_STYLE = { strong: 'bold', ok: 'green', warn: 'yellow', error: 'red', dim: 'dim' } as const satisfies Record<Tone, string>;

function headerLines(log: CliLog, out: Output): string[] {
  const h = log.header;
  const s = summarize(log);
  const first = [`session ${oneLine(h.id)}`, `created ${isoTime(h.createdAt)}`];
  if (h.cwd !== undefined) first.push(`cwd ${oneLine(h.cwd)}`);
  const lines = [out.style('bold', first.join(' · '))];
  const lineage: string[] = [];
  if (h.parentSession !== undefined) lineage.push(`forked from ${oneLine(h.parentSession)}`);
  if (h.seedLength !== undefined) lineage.push(`${plural(h.seedLength, 'event')} inherited`);
  if (h.origin !== undefined) lineage.push(`origin ${oneLine(h.origin)}`);
  if (h.delegationDepth) lineage.push(`delegation depth ${h.delegationDepth}`);
  if (h.agentPreset !== undefined) lineage.push(`preset ${oneLine(h.agentPreset)}`);
  if (lineage.length) lines.push(lineage.join(' · '));
  lines.push(
    `${plural(s.events, 'event')} in ${plural(s.rows, 'row')} · ${plural(s.turns, 'turn')} · ${plural(s.steps, 'step')}` +
      ` · ${plural(s.messages, 'message')} in history`,
  );
  if (log.tornTail)
    lines.push(
      out.style(
        'yellow',
        `torn tail at line ${log.tornTail.line}: ${plural(log.tornTail.droppedLines, 'line')} not loaded (${oneLine(log.tornTail.reason)})`,
      ),
    );
  if (log.repaired.length)
    lines.push(
      out.style(
        'yellow',
        `the last turn was left open: crash repair added ${plural(log.repaired.length, 'event')} (marked [crash repair])`,
      ),
    );
  const warnings = log.warnings.length;
  if (warnings) lines.push(out.style('yellow', `${plural(warnings, 'warning')}: dsh log check lists them`));
  return lines;
}

/** Timeline entries, one line each (and their detail lines), with the seq in the left column. */
export function renderEntries(entries: readonly Entry[], out: Output): void {
  const writer = entryWriter(
    entries.reduce((m, e) => Math.max(m, e.seq), 0),
    out,
  );
  for (const e of entries) writer.write(e);
  writer.end();
}

/** Characters of lines joined before one `out.line`. */
const BATCH_CHARS = 16384;

/**
 * Writes entries (each line and its detail lines) to `out`, the seq right-aligned to `maxSeq`'s
 * width. Lines are joined into texts of ~16K characters, each given to `out.line` once: the same
 * bytes, with one UTF-8 encoding per batch instead of one per line (a large log's timeline has
 * ~38,000 lines). `end` writes the last batch.
 */
function entryWriter(maxSeq: number, out: Output): { write(e: Entry): void; end(): void } {
  const width = String(maxSeq).length;
  const pad = ' '.repeat(width);
  // Depth is 0, 1 or 2: the indents (and the detail lines' lead) are made once, not per line.
  const indents = ['', '  ', '    '];
  const leads = indents.map((i) => `${pad}  ${i}    `);
  const mark = ` ${out.style('yellow', '[crash repair]')}`;
  const color = out.color;
  let batch = '';
  let lines = 0;
  const line = (text: string): void => {
    batch = lines++ === 0 ? text : `${batch}\n${text}`;
  };
  const end = (): void => {
    if (lines > 0) out.line(batch);
    batch = '';
    lines = 0;
  };
  return {
    write: (e) => {
      const indent = indents[e.depth] ?? '  '.repeat(e.depth);
      const seq = String(e.seq).padStart(width);
      const head = color && e.tone ? out.style(TONE_STYLE[e.tone], e.head) : e.head;
      line(`${color ? out.style('dim', seq) : seq}  ${indent}${head}${e.repaired ? mark : ''}`);
      const details = e.details;
      if (details !== undefined) {
        const lead = leads[e.depth] ?? `${pad}  ${indent}    `;
        for (const d of details) line(lead + d);
      }
      if (batch.length >= BATCH_CHARS) end();
    },
    end,
  };
}

export async function runShow(path: string, opts: ShowOptions, io: Io): Promise<number> {
  return showLog(await readLog(path), opts, io);
}

/** `dsh log show` of a log already read. */
export function showLog(log: CliLog, opts: ShowOptions, io: Io): number {
  const session = log.session;
  const timeline = { widths: opts.full ? FULL_WIDTHS : DEFAULT_WIDTHS, fileEventCount: log.eventCount };
  let range: { start: number; end: number } | undefined;
  if (opts.turn !== undefined) {
    range = turnRange(session.eventsOfType(['turn/start', 'turn/end']), opts.turn, session.length - 1);
    if (!range) {
      let turns = 0;
      for (const _ of session.eventsOfType(['turn/start'])) turns++;
      throw new CliError(
        'TURN_NOT_FOUND',
        `--turn ${opts.turn}: ${turns === 0 ? 'the log has no turns' : `the log has turns 1…${turns}`}`,
        { file: log.file },
      );
    }
  }
  for (const l of headerLines(log, io.out)) io.out.line(l);
  io.out.line();
  // Records, not events: a loaded log's chunk runs are counted whole, never materialised. Each
  // entry is written as soon as it is made; only the seq column's width is read first, from the log's end.
  const last = lastEntrySeq(session.recordsBack(range?.end), timeline);
  const writer = entryWriter(last === undefined || (range && last < range.start) ? 0 : last, io.out);
  eachEntry(session.records(), timeline, (e) => {
    if (!range || (e.seq >= range.start && e.seq <= range.end)) writer.write(e);
  });
  writer.end();
  return EXIT_OK;
}
