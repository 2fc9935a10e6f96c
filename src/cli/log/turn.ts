/**
 * `dsh log turn <log> <n>`: one run of the agent loop, reconstructed: how it ended, its figures,
 * a table of its steps, then every event of the turn as a timeline (`--json`: the figures and
 * every event, chunks included).
 */
import { collectStats, turnOf, viewOf, type StepStats, type TurnStats } from '../../query/index.js';
import { EXIT_OK } from '../errors.js';
import { DEFAULT_WIDTHS, FULL_WIDTHS, formatTurnEnd } from '../format.js';
import type { Io, Output } from '../output.js';
import { loadNotices, readLog } from '../read-log.js';
import { fields, table } from '../table.js';
import { count, isoTime, oneLine, plural, safeJson } from '../text.js';
import { pricesFor, query, writerFor } from './context.js';
import { costLine, costTotal, distLine, ms, seqList, tokensLine, unpricedLines } from './figures.js';
import { renderEntries } from './show.js';
import { buildTimeline } from './timeline.js';

export interface TurnOptions {
  json?: boolean;
  full?: boolean;
}

export function stateText(t: TurnStats, reason?: string): string {
  if (t.state === 'live') return 'open: its writer is still running';
  if (t.state === 'dangling') return 'open: no turn/end, and no live writer holds the session (dangling)';
  return reason ?? `${t.reason}${t.reasonDetail ? ` ${t.reasonDetail}` : ''}`;
}

export function stepTable(steps: readonly StepStats[], out: Output, indent = ''): string[] {
  return table(
    [
      { title: 'step' },
      { title: 'seqs' },
      { title: 'attempts', align: 'right' },
      { title: 'finish' },
      { title: 'ttft', align: 'right' },
      { title: 'decode', align: 'right' },
      { title: 'tools', align: 'right' },
      { title: 'failed', align: 'right' },
      { title: 'tool time', align: 'right' },
      { title: 'in', align: 'right' },
      { title: 'out', align: 'right' },
      { title: 'cost', align: 'right' },
      { title: 'wall', align: 'right' },
    ],
    steps.map((s) => [
      String(s.step),
      s.end !== undefined ? `${s.start}–${s.end}` : `${s.start}–`,
      String(s.attempts),
      s.finish ? oneLine(s.finish) : '-',
      ms(s.ttftMs),
      ms(s.decodeMs),
      count(s.toolCalls),
      s.toolFailures ? { text: count(s.toolFailures), style: 'red' as const } : '0',
      ms(s.toolMs),
      count(s.tokens.inputWithCache),
      count(s.tokens.output),
      costTotal(s.cost),
      ms(s.wallMs),
    ]),
    out,
    indent,
  );
}

export async function runTurn(path: string, n: number, opts: TurnOptions, io: Io): Promise<number> {
  const log = await readLog(path);
  for (const l of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${l}`);
  const slice = query(log.file, () => turnOf(log, n));
  const { stats } = collectStats(viewOf(log), { prices: await pricesFor(io), writer: writerFor(path) });
  const t = stats.perTurn!.find((x) => x.start === slice.start)!;
  if (opts.json) {
    io.out.line(
      safeJson(
        {
          file: log.file,
          sessionId: log.header.id,
          turn: n,
          start: slice.start,
          end: slice.end ?? null,
          last: slice.last,
          repaired: slice.repaired,
          reason: slice.reason ?? null,
          stats: t,
          events: slice.events,
        },
        2,
      ),
    );
    return EXIT_OK;
  }
  const o = io.out;
  const reason = slice.reason && t.state === 'ended' ? formatTurnEnd(slice.reason) : undefined;
  const tone =
    t.state === 'ended' && t.reason === 'completed'
      ? 'green'
      : t.state === 'live'
        ? 'cyan'
        : t.reason === 'max-tokens' || t.reason === 'blocked' || t.reason === 'aborted'
          ? 'yellow'
          : 'red';
  o.line(
    o.style('bold', `turn ${n} of session ${oneLine(log.header.id)}`) +
      ` · seq ${slice.start}–${slice.last} · ${o.style(tone, stateText(t, reason))}`,
  );
  const rows: [string, string][] = [
    ['started', isoTime(slice.events[0]!.time)],
    ['steps', `${count(t.steps.length)} · ${plural(t.attempts, 'model attempt')} · ${plural(t.retries, 'retry', 'retries')}`],
    [
      'tool calls',
      `${count(t.toolCalls)} (${count(t.toolFailures)} failed, ${count(t.unanswered.length)} unanswered) · tool time ${ms(t.toolMs)}`,
    ],
    ['tokens', tokensLine(t.tokens)],
    ['cost', costLine(t.cost)],
    ['first token', distLine(t.ttft)],
    ['decode', distLine(t.decode)],
    ['wall', ms(t.wallMs)],
  ];
  if (slice.repaired) rows.push(['repair', 'the turn/end was added by crash repair when the log was loaded']);
  for (const u of unpricedLines(t.cost)) rows.push(['unpriced', u]);
  for (const u of t.unanswered) rows.push(['unanswered', `${oneLine(u.name)} [${oneLine(u.callId)}] #${u.seq}`]);
  for (const l of fields(rows, o, '  ')) o.line(l);
  if (t.steps.length) {
    o.line();
    for (const l of stepTable(t.steps, o, '  ')) o.line(l);
  }
  o.line();
  renderEntries(buildTimeline(slice.events, { widths: opts.full ? FULL_WIDTHS : DEFAULT_WIDTHS, fileEventCount: log.eventCount }), o);
  if (slice.steps.length === 0 && slice.events.length > 2)
    o.line(o.style('dim', `(no step: the events ${seqList(slice.events.map((e) => e.seq))} sit between turn/start and turn/end)`));
  return EXIT_OK;
}
