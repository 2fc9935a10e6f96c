/**
 * `dsh log export`: send a session's OpenTelemetry GenAI traces to an OTLP/HTTP endpoint, from the
 * log alone (src/observability). Exporting the same log twice sends the same trace and span ids.
 */
import { exportSessionToOtlp, type OtlpExportOptions } from '../../observability/index.js';
import type { Io } from '../output.js';
import { CliError, EXIT_OK } from '../errors.js';
import { loadNotices, readLog, type CliLog } from '../read-log.js';
import { problemFromWarning } from '../problems.js';
import { resolveLogArg } from '../session-ref.js';
// config.js, not the config index: the index re-exports the zod schema, loaded only with a config file.
import { ConfigError, loadConfig } from '../../config/config.js';
import { oneLine, safeJson } from '../text.js';
import { checkOut, writeOut } from '../out-file.js';
import { deriveMessagesFrom } from '../../session/index.js';
import { buildTranscript, toHtml, toMarkdown } from './transcript.js';
import { headerAt, providerBody, type ProviderFormat } from './provider-messages.js';

export type ExportFormat = 'markdown' | 'html' | ProviderFormat;

export interface ExportOptions {
  otlp?: string;
  format?: ExportFormat;
  out?: string;
  at?: number;
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
async function configEndpoints(io: Io): Promise<Record<string, string>> {
  try {
    const { config } = await loadConfig({ env: io.env });
    const out: Record<string, string> = {};
    for (const [route, p] of Object.entries(config.providers ?? {})) if (p.baseUrl !== undefined) out[route] = p.baseUrl;
    return out;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.err.line(
      `${io.err.style('yellow', 'warning')}: provider endpoints from the config were not read (${oneLine(e.message)} [${e.code}` +
        ']); using the built-in ones',
    );
    return {};
  }
}

export async function runExport(arg: string, opts: ExportOptions, io: Io): Promise<number> {
  if ((opts.otlp === undefined) === (opts.format === undefined)) {
    throw new CliError('USAGE', 'give one of --otlp URL (OpenTelemetry traces) or --format markdown|html|openai|anthropic (a file)');
  }
  const otlpOnly = ['header', 'content', 'traces', 'serviceName', 'resourceAttribute'] as const;
  if (opts.format !== undefined) {
    const stray = otlpOnly.filter((k) => opts[k] !== undefined);
    if (stray.length > 0)
      throw new CliError(
        'USAGE',
        `--${stray[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is an --otlp option; --format writes a file`,
      );
  } else if (opts.out !== undefined || opts.at !== undefined) {
    throw new CliError('USAGE', `${opts.out !== undefined ? '--out' : '--at'} goes with --format; --otlp sends traces`);
  }
  if (opts.out !== undefined) checkOut(opts.out, 'the export');
  const log = await readLog(await resolveLogArg(arg, io.env));
  if (opts.format !== undefined) return writeFormat(log, opts.format, opts, io);
  const o: OtlpExportOptions = {
    url: opts.otlp!,
    headers: pairs('--header', opts.header),
    content: opts.content ?? 'none',
    traces: opts.traces ?? 'turn',
    endpoints: await configEndpoints(io),
    resourceAttributes: pairs('--resource-attribute', opts.resourceAttribute),
  };
  if (opts.serviceName) o.serviceName = opts.serviceName;
  const s = await exportSessionToOtlp(log.session, o);
  if (opts.json) io.out.line(JSON.stringify({ ...s, loadWarnings: log.warnings.map((w) => problemFromWarning(w, log.file)) }));
  else {
    for (const n of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
    io.out.line(
      `${log.file}: sent ${s.spans} span(s) of ${s.turns} turn(s) in ${s.traces} trace(s) (` +
        `${o.traces === 'session' ? 'one for the session' : 'one per turn'}) to ${opts.otlp} in ${s.requests} request(s)` +
        (`${s.incompleteTurns ? `; ${s.incompleteTurns} turn(s) marked incomplete` : ''}` +
          `${s.skippedTurns ? `; ${s.skippedTurns} inherited turn(s) left to the parent session` : ''}`),
    );
  }
  return EXIT_OK;
}

/** `--format`: a transcript (markdown, html) or a provider's request body (openai, anthropic). */
async function writeFormat(log: CliLog, format: ExportFormat, opts: ExportOptions, io: Io): Promise<number> {
  for (const n of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
  const events = log.session.events;
  // The end-of-seed marker the loader appends is not part of the file and changes no history.
  const last = log.eventCount + log.repaired.length - 1;
  let text: string;
  if (format === 'markdown' || format === 'html') {
    if (opts.at !== undefined)
      throw new CliError('USAGE', '--at picks the history for --format openai|anthropic; a transcript shows the whole log');
    const t = buildTranscript(log.session.id, events.slice(0, last + 1));
    text = format === 'markdown' ? toMarkdown(t) : toHtml(t);
  } else {
    const at = opts.at ?? last;
    if (at > last) {
      const range = last < 0 ? 'it has no events' : `its seqs are 0…${last}`;
      throw new CliError('SEQ_OUT_OF_RANGE', `--at ${at} is outside the log: ${range}`, { file: log.file });
    }
    const messages = at < 0 ? [] : deriveMessagesFrom(events, at);
    const { body, toolsWithoutSchema } = await providerBody(format, messages, headerAt(events, at));
    if (toolsWithoutSchema.length > 0) {
      io.err.line(
        `${io.err.style('yellow', 'warning')}: ${toolsWithoutSchema.length} tool(s) are named in the log without a schema and are ` +
          `left out of "tools": ${oneLine(toolsWithoutSchema.slice(0, 5).join(', '))}${toolsWithoutSchema.length > 5 ? ', …' : ''}`,
      );
    }
    text = `${safeJson(body, 2)}\n`;
  }
  if (opts.out === undefined) io.out.write(text);
  else {
    writeOut(opts.out, text, 'the export');
    io.err.line(`${oneLine(log.file)}: ${format} → ${oneLine(opts.out)}`);
  }
  return EXIT_OK;
}
