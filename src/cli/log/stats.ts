/**
 * `dsh log stats <log|id…>` and `dsh log stats --all [--since DATE] [--cwd DIR]`: what sessions
 * did and cost. One log: its figures, models, tools, alerts and (with `--turns`) a table of its
 * turns. Several, or the store: the totals, the end-reason distribution, the top tools, every
 * alert, and a row per session. Logs are read one at a time, so a store of any size fits.
 */
import {
  alertsOf,
  collectStats,
  FleetFold,
  viewOf,
  type Alert,
  type FleetStats,
  type SessionStats,
  type ToolStats,
  type Totals,
} from '../../query/index.js';
import type { PriceTable } from '../../llm/pricing.js';
import { CliError, EXIT_OK, EXIT_PROBLEM } from '../errors.js';
import type { Io, Output } from '../output.js';
import { problemFromError, type Problem } from '../problems.js';
import { loadNotices, readLog } from '../read-log.js';
import { fields, table } from '../table.js';
import { count, isoTime, oneLine, plural, safeJson, truncate } from '../text.js';
import { pricesFor, writerFor } from './context.js';
import { costLine, costTotal, countsLine, distLine, ms, REASON_ORDER, tokensLine, unpricedLines } from './figures.js';
import { checkSelection, selectStored, wantsStore, type Selection } from './select.js';
import { stepTable } from './turn.js';

export interface StatsOptions extends Selection {
  json?: boolean;
  turns?: boolean;
  top?: number;
}

interface Read {
  path: string;
  stats: SessionStats;
  alerts: Alert[];
}

function errorsLine(s: Totals): string {
  const parts: string[] = [];
  if (Object.keys(s.errors.model).length) parts.push(`model ${countsLine(s.errors.model)}`);
  if (Object.keys(s.errors.tool).length) parts.push(`tool ${countsLine(s.errors.tool)}`);
  if (Object.keys(s.errors.turn).length) parts.push(`turn ${countsLine(s.errors.turn)}`);
  return parts.length ? parts.join(' | ') : 'none';
}

function totalsRows(s: Totals): [string, string][] {
  const rows: [string, string][] = [
    ['reasons', countsLine(s.reasons, REASON_ORDER)],
    ['tokens', tokensLine(s.tokens)],
    ['cost', costLine(s.cost)],
  ];
  for (const u of unpricedLines(s.cost)) rows.push(['unpriced', u]);
  rows.push(
    ['first token', distLine(s.ttft)],
    ['decode', distLine(s.decode)],
    ['tool time', distLine(s.tool)],
    ['retries', s.retries.count ? `${count(s.retries.count)} (${countsLine(s.retries.byCode)})` : '0'],
    ['errors', errorsLine(s)],
  );
  return rows;
}

function toolTable(tools: readonly ToolStats[], top: number, out: Output): string[] {
  return table(
    [
      { title: 'tool' },
      { title: 'calls', align: 'right' },
      { title: 'failed', align: 'right' },
      { title: 'unanswered', align: 'right' },
      { title: 'p50', align: 'right' },
      { title: 'p95', align: 'right' },
      { title: 'max', align: 'right' },
      { title: 'errors' },
    ],
    tools
      .slice(0, top)
      .map((t) => [
        oneLine(truncate(t.name, 40)),
        count(t.calls),
        t.failures ? { text: count(t.failures), style: 'red' as const } : '0',
        t.unanswered ? { text: count(t.unanswered), style: 'yellow' as const } : '0',
        ms(t.duration.p50),
        ms(t.duration.p95),
        ms(t.duration.max),
        Object.keys(t.errors).length ? countsLine(t.errors) : '',
      ]),
    out,
    '  ',
  );
}

/** The shortest prefix (8 characters or more) that tells every id of the list apart. */
export function idWidth(ids: readonly string[]): number {
  const sorted = [...new Set(ids)].sort();
  let w = 8;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    let k = 0;
    while (k < a.length && k < b.length && a[k] === b[k]) k++;
    w = Math.max(w, k + 1);
  }
  return Math.min(w, 36);
}

function alertLines(alerts: readonly Alert[], out: Output, withSession: boolean, idw = 36, max = 50): string[] {
  const rows = alerts
    .slice(0, max)
    .map((a) => [
      ...(withSession ? [oneLine(a.sessionId.slice(0, idw))] : []),
      { text: a.kind, style: 'red' as const },
      a.turn !== undefined ? String(a.turn) : '-',
      `#${a.seq}`,
      oneLine(a.message),
    ]);
  const lines = table(
    [
      ...(withSession ? [{ title: 'session' }] : []),
      { title: 'alert' },
      { title: 'turn', align: 'right' as const },
      { title: 'seq', align: 'right' as const },
      { title: 'what' },
    ],
    rows,
    out,
    '  ',
  );
  if (alerts.length > max) lines.push(`  … and ${count(alerts.length - max)} more (--json lists all)`);
  return lines;
}

function printSession(r: Read, opts: StatsOptions, out: Output): void {
  const s = r.stats;
  const head = [`session ${oneLine(s.id)}`];
  if (s.cwd !== null) head.push(`cwd ${oneLine(s.cwd)}`);
  if (s.createdAt !== null) head.push(`created ${isoTime(s.createdAt)}`);
  out.line(out.style('bold', head.join(' · ')));
  const rows: [string, string][] = [
    [
      'size',
      `${plural(s.events, 'event')} · ${plural(s.turns, 'turn')} · ${plural(s.steps, 'step')} · ` +
        `${plural(s.attempts, 'model attempt')} · ${plural(s.toolCalls, 'tool call')} (${count(s.toolFailures)} failed, ` +
        `${count(s.unanswered.length)} unanswered)`,
    ],
  ];
  if (s.writer.state === 'live')
    rows.push(['writer', `pid ${s.writer.holder?.pid} on ${oneLine(s.writer.holder?.host ?? '?')} is writing it`]);
  rows.push(...totalsRows(s));
  for (const l of fields(rows, out, '  ')) out.line(l);
  if (s.models.length > 1 || s.cost.unpricedCalls > 0) {
    out.line();
    const models = table(
      [
        { title: 'model' },
        { title: 'calls', align: 'right' },
        { title: 'in', align: 'right' },
        { title: 'cache read', align: 'right' },
        { title: 'out', align: 'right' },
        { title: 'cost', align: 'right' },
      ],
      s.models.map((m) => [
        `${oneLine(m.provider ?? '?')}:${oneLine(m.model ?? '?')}`,
        count(m.tokens.calls),
        count(m.tokens.input),
        count(m.tokens.cacheRead),
        count(m.tokens.output),
        costTotal(m.cost),
      ]),
      out,
      '  ',
    );
    for (const l of models) out.line(l);
  }
  if (s.tools.length) {
    out.line();
    for (const l of toolTable(s.tools, opts.top ?? 20, out)) out.line(l);
  }
  if (r.alerts.length) {
    out.line();
    out.line(out.style('bold', `alerts (${count(r.alerts.length)})`));
    for (const l of alertLines(r.alerts, out, false)) out.line(l);
  }
  if (opts.turns && s.perTurn?.length) {
    out.line();
    const turns = table(
      [
        { title: 'turn', align: 'right' },
        { title: 'seqs' },
        { title: 'ended' },
        { title: 'steps', align: 'right' },
        { title: 'tools', align: 'right' },
        { title: 'failed', align: 'right' },
        { title: 'in', align: 'right' },
        { title: 'out', align: 'right' },
        { title: 'cost', align: 'right' },
        { title: 'wall', align: 'right' },
      ],
      s.perTurn.map((t) => [
        String(t.turn),
        t.end !== undefined ? `${t.start}–${t.end}` : `${t.start}–`,
        t.state === 'ended'
          ? {
              text: `${t.reason}${t.reasonDetail ? ` ${oneLine(t.reasonDetail)}` : ''}`,
              ...(t.reason === 'completed' ? {} : { style: 'yellow' as const }),
            }
          : { text: t.state, style: t.state === 'live' ? ('cyan' as const) : ('red' as const) },
        count(t.steps.length),
        count(t.toolCalls),
        count(t.toolFailures),
        count(t.tokens.inputWithCache),
        count(t.tokens.output),
        costTotal(t.cost),
        ms(t.wallMs),
      ]),
      out,
      '  ',
    );
    for (const l of turns) out.line(l);
    if (s.perTurn.length === 1 && s.perTurn[0]!.steps.length) {
      out.line();
      for (const l of stepTable(s.perTurn[0]!.steps, out, '  ')) out.line(l);
    }
  }
}

function printFleet(f: FleetStats, failed: Problem[], opts: StatsOptions, out: Output): void {
  out.line(
    out.style(
      'bold',
      `${plural(f.sessions, 'session')}${failed.length ? ` (${count(failed.length)} more not read)` : ''} · ` +
        `${plural(f.turns, 'turn')} · ${plural(f.steps, 'step')} · ${plural(f.events, 'event')} · ` +
        `${plural(f.toolCalls, 'tool call')} (${count(f.toolFailures)} failed, ${count(f.unanswered)} unanswered)`,
    ),
  );
  for (const l of fields(totalsRows(f), out, '  ')) out.line(l);
  if (f.tools.length) {
    out.line();
    out.line(out.style('bold', `top tools (${count(Math.min(f.tools.length, opts.top ?? 10))} of ${count(f.tools.length)})`));
    for (const l of toolTable(f.tools, opts.top ?? 10, out)) out.line(l);
  }
  out.line();
  out.line(out.style('bold', `alerts (${count(f.alerts.length)})`));
  const idw = idWidth(f.perSession.map((r) => r.id));
  if (f.alerts.length) for (const l of alertLines(f.alerts, out, true, idw)) out.line(l);
  else out.line('  none');
  out.line();
  out.line(out.style('bold', 'sessions'));
  const rows = f.perSession.map((r) => [
    oneLine(r.id.slice(0, idw)),
    r.lastTime !== null ? isoTime(r.lastTime).slice(0, 16).replace('T', ' ') : '-',
    count(r.turns),
    countsLine(r.reasons, REASON_ORDER),
    count(r.tokens.inputWithCache),
    count(r.tokens.output),
    costTotal(r.cost),
    r.alerts ? { text: count(r.alerts), style: 'red' as const } : '0',
    oneLine(truncate(r.cwd ?? '-', 40)),
  ]);
  for (const l of table(
    [
      { title: 'session' },
      { title: 'last event (UTC)' },
      { title: 'turns', align: 'right' },
      { title: 'reasons' },
      { title: 'in', align: 'right' },
      { title: 'out', align: 'right' },
      { title: 'cost', align: 'right' },
      { title: 'alerts', align: 'right' },
      { title: 'cwd' },
    ],
    rows,
    out,
    '  ',
  ))
    out.line(l);
}

async function readOne(
  path: string,
  prices: PriceTable,
  detail: boolean,
  io: Io,
): Promise<Read & { samples: ReturnType<typeof collectStats>['samples'] }> {
  const log = await readLog(path);
  // An open turn is reported as live or dangling; that crash repair closed it in memory is no news here.
  for (const l of loadNotices(log)) if (!l.endsWith('[OPEN_TURN]')) io.err.line(`${io.err.style('yellow', 'warning')}: ${l}`);
  const { stats, samples } = collectStats(viewOf(log), { prices, writer: writerFor(path), detail });
  return { path: log.file, stats, samples, alerts: alertsOf(stats) };
}

/** `paths` are the arguments, already resolved from session ids to files. */
export async function runStats(paths: readonly string[], opts: StatsOptions, io: Io): Promise<number> {
  checkSelection(paths, opts);
  const store = wantsStore(opts);
  if (!store && paths.length === 0)
    throw new CliError('USAGE', 'give log files or session ids, or --all (with --since, --cwd) for the stored sessions');
  const prices = await pricesFor(io);
  if (!store && paths.length === 1) {
    const r = await readOne(paths[0]!, prices, true, io);
    if (opts.json) io.out.line(safeJson({ file: r.path, ...r.stats, alerts: r.alerts }, 2));
    else printSession(r, opts, io.out);
    return EXIT_OK;
  }
  let inputs: string[] = [...paths];
  if (store) {
    const { sessions, root } = await selectStored(opts, io);
    if (sessions.length === 0) {
      const what =
        `no stored sessions${opts.cwd !== undefined ? ` of ${oneLine(opts.cwd)}` : ''}` +
        `${opts.since !== undefined ? ` written since ${isoTime(opts.since)}` : ''} under ${oneLine(root)}`;
      if (opts.json) io.out.line(safeJson({ ...new FleetFold().result(), failed: [] }, 2));
      else io.out.line(what);
      return EXIT_OK;
    }
    inputs = sessions.map((s) => s.path);
  }
  const fleet = new FleetFold();
  const failed: Problem[] = [];
  for (const p of inputs) {
    try {
      const r = await readOne(p, prices, true, io);
      // Per-turn figures served the alerts; a fleet keeps only the totals.
      delete r.stats.perTurn;
      fleet.add(r.stats, r.samples, r.alerts, r.path);
    } catch (e) {
      const prob = problemFromError(e, p);
      failed.push(prob);
      io.err.line(`${io.err.style('yellow', 'warning')}: ${oneLine(prob.file)}: not read: ${oneLine(prob.message)} [${prob.code}]`);
    }
  }
  const f = fleet.result();
  if (opts.json) io.out.line(safeJson({ ...f, failed }, 2));
  else printFleet(f, failed, opts, io.out);
  // Logs named on the command line that cannot be read are a failure; stored ones a warning.
  return !store && failed.length > 0 ? EXIT_PROBLEM : EXIT_OK;
}
