/**
 * `dsh log check <file…>`: load each log as `dsh` would and report. A file passes when it loads
 * (warnings are printed but pass, unless `--strict`). Loading stops at the first refusal, so a
 * failing file reports one error: the first line the harness itself would refuse.
 */
import { EXIT_OK, EXIT_PROBLEM } from '../errors.js';
import type { Io } from '../output.js';
import { formatProblem, problemFromError, problemFromWarning, type Problem } from '../problems.js';
import { displayName, readLog, type CliLog } from '../read-log.js';
import { summarize, type LogSummary } from '../summary.js';
import { oneLine, plural, safeJson } from '../text.js';

export interface CheckOptions {
  json?: boolean;
  strict?: boolean;
  quiet?: boolean;
}

export interface FileReport {
  file: string;
  ok: boolean;
  verdict: 'ok' | 'ok-with-warnings' | 'failed';
  summary: LogSummary | null;
  problems: Problem[];
}

export function checkFile(path: string, strict: boolean): FileReport {
  const file = displayName(path);
  let log: CliLog;
  try {
    log = readLog(path);
  } catch (e) {
    return { file, ok: false, verdict: 'failed', summary: null, problems: [problemFromError(e, file)] };
  }
  const problems = log.warnings.map((w) => problemFromWarning(w, file));
  const ok = !(strict && problems.length > 0);
  return { file, ok, verdict: !ok ? 'failed' : problems.length ? 'ok-with-warnings' : 'ok', summary: summarize(log), problems };
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
  const verdict = r.ok ? o.style('green', 'ok') : o.style('red', strict ? 'FAILED (--strict: warnings fail)' : 'FAILED');
  return `${name}: ${verdict} · ${facts.join(' · ')}`;
}

/** A file to check, or an argument that could not be resolved to one (and why). */
export type CheckInput = string | { file: string; error: unknown };

export function runCheck(inputs: readonly CheckInput[], opts: CheckOptions, io: Io): number {
  const strict = opts.strict === true;
  const reports = inputs.map((p): FileReport =>
    typeof p === 'string' ? checkFile(p, strict) : { file: p.file, ok: false, verdict: 'failed', summary: null, problems: [problemFromError(p.error, p.file)] },
  );
  const ok = reports.every((r) => r.ok);
  if (opts.json) {
    io.out.line(safeJson({ ok, strict, files: reports }, 2));
    return ok ? EXIT_OK : EXIT_PROBLEM;
  }
  for (const r of reports) {
    for (const p of r.problems) {
      if (opts.quiet && p.severity === 'warning') continue;
      io.out.line(formatProblem(p, io.out));
    }
    io.out.line(summaryLine(r, strict, io));
  }
  if (reports.length > 1) {
    const failed = reports.filter((r) => !r.ok).length;
    io.out.line(`${plural(reports.length, 'file')}: ${reports.length - failed} ok, ${failed} failed`);
  }
  return ok ? EXIT_OK : EXIT_PROBLEM;
}
