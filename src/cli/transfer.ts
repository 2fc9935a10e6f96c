/**
 * `dsh sessions export` and `dsh sessions import`: a session leaves a store as a dsh v0 JSONL
 * log and enters another exactly as it left: the header and every event, each the same JSON text
 * byte for byte (so `export | import` between the JSONL store and PostgreSQL, in either
 * direction, and back, gives the same file). What is exported is the log as stored: no crash
 * repair, no seed marker; a turn left open arrives open and is closed by the next `open`.
 * "Byte for byte" holds for the lines dsh writes (canonical JSON); a hand-edited line (spaces,
 * escapes, CRLF, a BOM) is accepted and stored as its canonical form, the same JSON value.
 *
 *   dsh sessions export 3f2a > s.jsonl
 *   DSH_STORE=postgres://… dsh sessions import s.jsonl
 *   dsh sessions export 3f2a | DSH_STORE=postgres://… dsh sessions import -
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { CodedError } from '../model/coded-error.js';
import { encodeJsonl } from '../session/index.js';
import { CliError, EXIT_OK, EXIT_PROBLEM } from './errors.js';
import type { Io } from './output.js';
import { readLog } from './read-log.js';
import { findSession } from './session-ref.js';
import { storeFor } from './store.js';
import { oneLine, plural, safeJson } from './text.js';

export interface ExportOptions {
  out?: string;
}

export async function runSessionsExport(ref: string, opts: ExportOptions, io: Io): Promise<number> {
  const store = await storeFor(io.env);
  let text: string;
  let id: string;
  try {
    id = (await findSession(store, ref)).id;
    const load = await store.inspect(id, { repair: false });
    text = encodeJsonl(load.header, load.session.events.slice(0, load.eventCount));
  } finally {
    await store.close();
  }
  if (opts.out === undefined) {
    io.out.write(text);
    return EXIT_OK;
  }
  // Whole or not at all: a temp file beside the target, renamed over it.
  const tmp = `${opts.out}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, text, { flag: 'wx' });
    renameSync(tmp, opts.out);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new CliError('WRITE_FAILED', `cannot write the export: ${(e as Error).message}`, { file: opts.out, cause: e });
  }
  io.err.line(`exported session ${oneLine(id)} to ${oneLine(opts.out)}`);
  return EXIT_OK;
}

export interface ImportOptions {
  json?: boolean;
}

interface ImportReport {
  file: string;
  id?: string;
  events?: number;
  location?: string;
  error?: { code: string; message: string };
}

/** Import each file; one that cannot be imported is reported and the others still are. */
export async function runSessionsImport(files: string[], opts: ImportOptions, io: Io): Promise<number> {
  const store = await storeFor(io.env, { create: true });
  const reports: ImportReport[] = [];
  try {
    for (const file of files) {
      try {
        const log = await readLog(file);
        if (log.tornTail) {
          throw new CliError(
            'TORN_TAIL',
            `the log has a torn tail at line ${log.tornTail.line} (${log.tornTail.reason}); an import copies whole logs only: ` +
              'open it once with dsh (which moves the tail aside) or cut it at the last good line',
            { file: log.file },
          );
        }
        const events = log.session.events.slice(0, log.eventCount);
        const info = await store.importLog({ header: log.header, events });
        reports.push({ file: log.file, id: info.id, events: events.length, location: info.location });
      } catch (e) {
        reports.push({ file, error: importFailure(e) });
      }
    }
  } finally {
    await store.close();
  }
  if (opts.json) io.out.line(safeJson(reports, 2));
  else {
    for (const r of reports) {
      if (r.error) io.err.line(`dsh: ${oneLine(r.file)}: ${oneLine(r.error.message)} [${r.error.code}]`);
      else io.out.line(`${oneLine(r.file)}: imported session ${oneLine(r.id!)} (${plural(r.events!, 'event')}) as ${oneLine(r.location!)}`);
    }
  }
  return reports.some((r) => r.error) ? EXIT_PROBLEM : EXIT_OK;
}

/**
 * The report of a failed import. Only dsh's own errors (a `CodedError`, recognised by type) lend
 * their stable code; anything else is IMPORT_FAILED, and its own code (a PostgreSQL SQLSTATE, a
 * Node `ENOENT`), which is no dsh code, is kept in the message.
 */
export function importFailure(e: unknown): { code: string; message: string } {
  if (e instanceof CodedError) return { code: e.code, message: e.message };
  const message = e instanceof Error ? e.message : String(e);
  const raw = (e as { code?: unknown } | null | undefined)?.code;
  return { code: 'IMPORT_FAILED', message: typeof raw === 'string' || typeof raw === 'number' ? `${message} (${raw})` : message };
}
