/**
 * Reading another agent's file as dsh sessions. `importText` maps a whole file (every session it
 * holds: a transcript and its sidechains, the records of an evaluation output); `asLoadedLog`
 * gives one of them the shape of a loaded dsh log, so every reader of logs (the CLI's commands,
 * the viewer, search) takes it as it takes a dsh log.
 *
 * A file holding several sessions names them by key: `FILE#key` (`main` is the first).
 */
import type { LoadedLog, LogWarning } from '../session/index.js';
import { detect, detectDocument, knownFormats, type Detection } from './detect.js';
import { ImportError } from './errors.js';
import { jsonDocument } from './source.js';
import type { ForeignFormat, FormatInfo, ImportedSession, ImportResult } from './types.js';
import type { Loss } from './losses.js';

export interface ImportOptions {
  /** The name errors and the import record give the file. */
  file?: string;
}

/**
 * Map a foreign file. Returns undefined when it is a dsh log (the codec reads those); throws
 * `UNKNOWN_FORMAT` (naming the known formats) when it is neither.
 */
export function importText(text: string, opts: ImportOptions = {}): ImportResult | undefined {
  return importDetected(detect(text), text, opts);
}

export function importDetected(d: Detection, text: string, opts: ImportOptions = {}): ImportResult | undefined {
  const file = opts.file;
  if (d.kind === 'dsh') return undefined;
  if (d.kind === 'unknown') throw unknown(file, d.why, d.line);
  let format: ForeignFormat;
  let doc: unknown;
  if (d.kind === 'document') {
    doc = jsonDocument(text, file, 'JSON document');
    const f = detectDocument(doc);
    if (!f)
      throw unknown(
        file,
        Array.isArray(doc)
          ? 'it is a JSON array that is not an OpenHands trajectory (a list of events with source and action or observation)'
          : 'it is a JSON document of none of them',
      );
    format = f;
  } else format = d.format;
  const sessions = format.read({ text, file }, doc);
  if (sessions.length === 0)
    throw new ImportError('MALFORMED_SOURCE', `${file ?? '<input>'}: a ${format.label} with no session in it`, {
      ...(file !== undefined ? { file } : {}),
      format: format.id,
    });
  return { format: { id: format.id, label: format.label }, sessions };
}

function unknown(file: string | undefined, why: string, line?: number): ImportError {
  const where = `${file ?? '<input>'}${line !== undefined ? `:${line}` : ''}`;
  return new ImportError('UNKNOWN_FORMAT', `${where}: not a session log this build reads: ${why}. Known formats: ${knownFormats()}`, {
    ...(file !== undefined ? { file } : {}),
    ...(line !== undefined ? { line } : {}),
  });
}

/** A foreign session in the shape of a loaded dsh log. */
export interface ImportedLog extends LoadedLog {
  format: FormatInfo;
  /** This session's key in its file. */
  key: string;
  /** Every session of the file (key, label, id), this one included. */
  siblings: { key: string; label: string; id: string }[];
  /** What had no dsh event, per field. */
  losses: Loss[];
}

/** The session `key` names (`main` or undefined: the first), as a loaded log. */
export function asLoadedLog(result: ImportResult, key: string | undefined, file: string | undefined): ImportedLog {
  const pick = key === undefined || key === '' ? result.sessions[0]! : result.sessions.find((s) => s.key === key || s.header.id === key);
  if (!pick) {
    const keys = result.sessions.map((s) => s.key).join(', ');
    throw new ImportError(
      'NO_SUCH_SESSION',
      `${file ?? '<input>'} has no session "${key}"; it holds: ${keys}`,
      file !== undefined ? { file } : {},
    );
  }
  return toLoaded(pick, result, file);
}

function toLoaded(s: ImportedSession, result: ImportResult, file: string | undefined): ImportedLog {
  const warnings: LogWarning[] = [];
  const siblings = result.sessions.map((x) => ({ key: x.key, label: x.label, id: x.header.id }));
  const others = siblings.filter((x) => x.key !== s.key);
  warnings.push({
    code: 'IMPORTED',
    message: `read as: ${result.format.label}${
      others.length
        ? `; the file holds ${others.length} more session(s): ${others
            .slice(0, 5)
            .map((o) => `${file ?? ''}#${o.key}`)
            .join(', ')}${others.length > 5 ? ', …' : ''}`
        : ''
    }`,
  });
  for (const n of s.notes) warnings.push({ code: 'IMPORTED', message: n });
  for (const l of s.losses) {
    const w: LogWarning = { code: 'IMPORT_LOSS', message: `${l.count} × ${l.field}: ${l.why}` };
    if (l.firstLine !== undefined) w.line = l.firstLine;
    warnings.push(w);
  }
  const records = new Set<number>();
  for (let seq = 0; seq < s.eventCount; seq++) {
    const l = s.lineOf(seq);
    if (l !== undefined) records.add(l);
  }
  const rowCount = s.records ?? records.size;
  return {
    session: s.session,
    header: s.header,
    warnings,
    rowCount,
    eventCount: s.eventCount,
    repaired: [],
    lineOf: s.lineOf,
    format: result.format,
    key: s.key,
    siblings,
    losses: s.losses,
  };
}

/** `FILE#key` → the file and the key (undefined when the argument names no session key). */
export function splitSessionKey(arg: string): { path: string; key: string | undefined } {
  const i = arg.lastIndexOf('#');
  if (i <= 0 || i === arg.length - 1) return { path: arg, key: undefined };
  return { path: arg.slice(0, i), key: arg.slice(i + 1) };
}
