/**
 * `dsh log check <file…>`: load each log as `dsh` would and report. A file passes when it loads
 * (warnings are printed but pass, unless `--strict`). Loading stops at the first refusal, so a
 * failing file reports one error: the first line the harness itself would refuse.
 */
import type { Alert, AlertKind } from '../../query/index.js';
import { EXIT_OK, EXIT_PROBLEM } from '../errors.js';
import type { Io } from '../output.js';
import { formatProblem, problemFromError, problemFromWarning, type Problem } from '../problems.js';
import { displayName, readLog, type CliLog } from '../read-log.js';
import { summarize, type LogSummary } from '../summary.js';
import { resolveLogArg } from '../session-ref.js';
import { pricesFor, writerFor } from './context.js';
import { checkSelection, selectStored, wantsStore, type Selection } from './select.js';
import { oneLine, plural, safeJson } from '../text.js';

export interface CheckOptions {
  json?: boolean;
  strict?: boolean;
  quiet?: boolean;
  /** With `--alerts`: the kinds that fail a log (its load problems still do). */
  alerts?: readonly AlertKind[];
}

/** What `--alerts` computes for a loaded log: the alerts its statistics raise. */
export interface AlertContext {
  kinds: readonly AlertKind[];
  alertsOf: (log: CliLog, path: string) => Alert[];
}

/** The query layer is imported here, with --alerts only: a plain check does not load it. */
async function alertContext(kinds: readonly AlertKind[], io: Io): Promise<AlertContext> {
  const [q, prices] = await Promise.all([import('../../query/index.js'), pricesFor(io)]);
  return {
    kinds,
    alertsOf: (log, path) => q.alertsOf(q.collectStats(q.viewOf(log), { prices, writer: writerFor(path) }).stats, kinds),
  };
}

export interface FileReport {
  file: string;
  ok: boolean;
  verdict: 'ok' | 'ok-with-warnings' | 'failed';
  summary: LogSummary | null;
  problems: Problem[];
  /** With `--alerts` (absent otherwise, and for a log that did not load). */
  alerts?: Alert[];
}

export async function checkFile(path: string, strict: boolean, alerting?: AlertContext): Promise<FileReport> {
  const file = displayName(path);
  let log: CliLog;
  try {
    log = await readLog(path);
  } catch (e) {
    return { file, ok: false, verdict: 'failed', summary: null, problems: [problemFromError(e, file)] };
  }
  const problems = log.warnings.map((w) => problemFromWarning(w, file));
  const ok = !(strict && problems.length > 0);
  const report: FileReport = {
    file,
    ok,
    verdict: !ok ? 'failed' : problems.length ? 'ok-with-warnings' : 'ok',
    summary: summarize(log),
    problems,
  };
  if (alerting) {
    report.alerts = alerting.alertsOf(log, path);
  }
  return report;
}

function summaryLine(r: FileReport, strict: boolean, io: Io): string {
  const o = io.out;
  const name = oneLine(r.file);
  const s = r.summary;
  if (!s) return `${name}: ${o.style('red', 'FAILED')}`;
  const facts = [
    `${plural(s.events, 'event')} in ${plural(s.rows, 'row')}`,
    plural(s.turns, 'turn'),
    plural(s.steps, 'step'),
    plural(s.messages, 'message'),
  ];
  if (s.repairedEvents) facts.push(`${plural(s.repairedEvents, 'event')} added by crash repair`);
  if (s.tornTail) facts.push(`torn tail at line ${s.tornTail.line}`);
  if (r.problems.length) facts.push(plural(r.problems.length, 'warning'));
  if (r.alerts?.length) facts.push(o.style('red', plural(r.alerts.length, 'alert')));
  const verdict = r.ok
    ? r.alerts?.length
      ? o.style('red', 'ALERT')
      : o.style('green', 'ok')
    : o.style('red', strict ? 'FAILED (--strict: warnings fail)' : 'FAILED');
  return `${name}: ${verdict} · ${facts.join(' · ')}`;
}

/** A file to check, or an argument that could not be resolved to one (and why). */
export type CheckInput = string | { file: string; error: unknown };

export async function runCheck(inputs: readonly CheckInput[], opts: CheckOptions, io: Io, alerting?: AlertContext): Promise<number> {
  const strict = opts.strict === true;
  // One file at a time: each report keeps a summary, not its log.
  const reports: FileReport[] = [];
  for (const p of inputs)
    reports.push(
      typeof p === 'string'
        ? await checkFile(p, strict, alerting)
        : { file: p.file, ok: false, verdict: 'failed', summary: null, problems: [problemFromError(p.error, p.file)] },
    );
  const alerts = reports.reduce((n, r) => n + (r.alerts?.length ?? 0), 0);
  const ok = reports.every((r) => r.ok) && alerts === 0;
  if (opts.json) {
    io.out.line(
      safeJson(alerting ? { ok, strict, alertKinds: alerting.kinds, alerts, files: reports } : { ok, strict, files: reports }, 2),
    );
    return ok ? EXIT_OK : EXIT_PROBLEM;
  }
  for (const r of reports) {
    for (const p of r.problems) {
      if (opts.quiet && p.severity === 'warning') continue;
      io.out.line(formatProblem(p, io.out));
    }
    for (const a of r.alerts ?? []) io.out.line(alertLine(r.file, a, io));
    io.out.line(summaryLine(r, strict, io));
  }
  if (reports.length > 1) {
    const failed = reports.filter((r) => !r.ok).length;
    io.out.line(
      `${plural(reports.length, 'file')}: ${reports.length - failed} ok, ${failed} failed` +
        `${alerting ? `; ${plural(alerts, 'alert')} in ${plural(reports.filter((r) => r.alerts?.length).length, 'file')}` : ''}`,
    );
  }
  return ok ? EXIT_OK : EXIT_PROBLEM;
}

/** `file: alert dangling (turn 3, seq 120): …`. */
function alertLine(file: string, a: Alert, io: Io): string {
  const tags = [a.turn !== undefined ? `turn ${a.turn}` : undefined, `seq ${a.seq}`].filter((x) => x !== undefined);
  return `${oneLine(file)}: ${io.out.style('red', `alert ${a.kind}`)} (${tags.join(', ')}): ${oneLine(a.message)}`;
}

/**
 * The command: files and session ids, or the store's sessions (`--all`, `--since`, `--cwd`), and
 * with `--alerts` the statistics each log's alerts come from. `missing` reports a call with
 * nothing to check, as commander reports a missing argument.
 */
export async function runCheckCommand(
  given: readonly string[],
  opts: CheckOptions & Selection,
  io: Io,
  missing: () => never,
): Promise<number> {
  checkSelection(given, opts);
  let inputs: CheckInput[];
  if (wantsStore(opts)) {
    const { sessions, root } = await selectStored(opts, io);
    if (sessions.length === 0) {
      if (opts.json)
        io.out.line(
          safeJson(
            { ok: true, strict: opts.strict === true, ...(opts.alerts ? { alertKinds: opts.alerts, alerts: 0 } : {}), files: [] },
            2,
          ),
        );
      else io.out.line(`no stored sessions to check under ${oneLine(root)}`);
      return EXIT_OK;
    }
    inputs = sessions.map((s) => s.path);
  } else {
    if (given.length === 0) missing();
    // One argument that names no single session (ambiguous, compressed) fails as that file,
    // like a missing file does; the others are still checked.
    inputs = await Promise.all(given.map((f) => resolveLogArg(f, io.env).catch((error: unknown) => ({ file: f, error }))));
  }
  const alerting = opts.alerts ? await alertContext(opts.alerts, io) : undefined;
  return runCheck(inputs, opts, io, alerting);
}
