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
import { ConfigError, loadConfig } from '../../config/index.js';
import { oneLine } from '../text.js';

export interface ExportOptions {
  otlp: string;
  header?: string[];
  content?: 'none' | 'full';
  serviceName?: string;
  resourceAttribute?: string[];
  traces?: 'turn' | 'session';
  json?: boolean;
}

function pairs(flag: string, list: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list) {
    const i = h.indexOf('=');
    if (i <= 0) throw new CliError('USAGE', `${flag} wants NAME=VALUE, got ${JSON.stringify(h)}`);
    out[h.slice(0, i).trim()] = h.slice(i + 1);
  }
  return out;
}

/**
 * The base URLs the config gives provider routes (for `server.address` / `server.port`; the log
 * names the route only). A config that does not load costs only those: the built-in endpoints
 * are used and a warning says why.
 */
function configEndpoints(io: Io): Record<string, string> {
  try {
    const { config } = loadConfig({ env: io.env });
    const out: Record<string, string> = {};
    for (const [route, p] of Object.entries(config.providers ?? {})) if (p.baseUrl !== undefined) out[route] = p.baseUrl;
    return out;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.err.line(`${io.err.style('yellow', 'warning')}: provider endpoints from the config were not read (${oneLine(e.message)} [${e.code}]); using the built-in ones`);
    return {};
  }
}

export async function runExport(arg: string, opts: ExportOptions, io: Io): Promise<number> {
  const log = readLog(await resolveLogArg(arg, io.env));
  const o: OtlpExportOptions = {
    url: opts.otlp,
    headers: pairs('--header', opts.header),
    content: opts.content ?? 'none',
    traces: opts.traces ?? 'turn',
    endpoints: configEndpoints(io),
    resourceAttributes: pairs('--resource-attribute', opts.resourceAttribute),
  };
  if (opts.serviceName) o.serviceName = opts.serviceName;
  const s = await exportSessionToOtlp(log.session, o);
  if (opts.json) io.out.line(JSON.stringify({ ...s, loadWarnings: log.warnings.map((w) => problemFromWarning(w, log.file)) }));
  else {
    for (const n of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
    io.out.line(
      `${log.file}: sent ${s.spans} span(s) of ${s.turns} turn(s) in ${s.traces} trace(s) (${o.traces === 'session' ? 'one for the session' : 'one per turn'}) to ${opts.otlp} in ${s.requests} request(s)` +
        `${s.incompleteTurns ? `; ${s.incompleteTurns} turn(s) marked incomplete` : ''}${s.skippedTurns ? `; ${s.skippedTurns} inherited turn(s) left to the parent session` : ''}`,
    );
  }
  return EXIT_OK;
}
