/**
 * `dsh log export`: send a session's OpenTelemetry GenAI traces to an OTLP/HTTP endpoint, from the
 * log alone (src/observability). Exporting the same log twice sends the same trace and span ids.
 */
import { exportSessionToOtlp, type OtlpExportOptions } from '../../observability/index.js';
import type { Io } from '../output.js';
import { CliError, EXIT_OK } from '../errors.js';
import { loadNotices, readLog } from '../read-log.js';
import { problemFromWarning } from '../problems.js';
import { resolveLogArg } from '../session-ref.js';

export interface ExportOptions {
  otlp: string;
  header?: string[];
  content?: 'none' | 'full';
  serviceName?: string;
  json?: boolean;
}

function headers(list: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list) {
    const i = h.indexOf('=');
    if (i <= 0) throw new CliError('USAGE', `--header wants NAME=VALUE, got ${JSON.stringify(h)}`);
    out[h.slice(0, i).trim()] = h.slice(i + 1);
  }
  return out;
}

export async function runExport(arg: string, opts: ExportOptions, io: Io): Promise<number> {
  const log = readLog(await resolveLogArg(arg, io.env));
  const o: OtlpExportOptions = { url: opts.otlp, headers: headers(opts.header), content: opts.content ?? 'none' };
  if (opts.serviceName) o.serviceName = opts.serviceName;
  const s = await exportSessionToOtlp(log.session, o);
  if (opts.json) io.out.line(JSON.stringify({ ...s, loadWarnings: log.warnings.map((w) => problemFromWarning(w, log.file)) }));
  else {
    for (const n of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
    io.out.line(
      `${log.file}: sent ${s.spans} span(s) in ${s.turns} trace(s) (one per turn) to ${opts.otlp} in ${s.requests} request(s)` +
        `${s.incompleteTurns ? `; ${s.incompleteTurns} turn(s) marked incomplete` : ''}${s.skippedTurns ? `; ${s.skippedTurns} inherited turn(s) left to the parent session` : ''}`,
    );
  }
  return EXIT_OK;
}
