/**
 * Load a dsh v0 JSONL log into a `Session`: decode lines (rows expanded, torn tail reported),
 * apply read-time legacy imports, validate every event exactly as `append` would (errors name the
 * file line, seq and rule), close a turn the writer left open (crash repair), and mark the end of
 * the seed.
 */
import { Session } from '../session.js';
import { SessionError } from '../errors.js';
import type { SessionHeader } from '../events.js';
import { interruptedTurnClosers, type EventDraft } from '../repair.js';
import { decodeJsonl, importEvents, type DecodeOptions, type LogWarning, type TornTail } from './jsonl.js';
import type { ValidationOptions } from '../validate.js';

export interface LoadOptions extends DecodeOptions {
  /**
   * `{{token}}` placeholders where a path, id, prompt or tool list belongs (tokenised test
   * fixtures): `warn` reports and keeps them; `error` (the default) refuses them.
   */
  placeholders?: 'warn' | 'error';
  /** Append crash-repair closers when the last turn is open (default true, as dsh's load does). */
  repair?: boolean;
  clock?: () => number;
}

export interface LoadedLog {
  session: Session;
  header: SessionHeader;
  warnings: LogWarning[];
  rowCount: number;
  /** Events read from the file (before repair closers and the end-seed marker). */
  eventCount: number;
  tornTail?: TornTail;
  /** Closers appended by crash repair (empty when every turn was closed). */
  repaired: EventDraft[];
  lineOf(seq: number): number | undefined;
}

export function loadJsonl(text: string, opts: LoadOptions = {}): LoadedLog {
  const decoded = decodeJsonl(text, opts);
  const warnings = decoded.warnings;
  const id = typeof decoded.header.id === 'string' ? decoded.header.id : '';
  importEvents(decoded, id, opts);
  const eventCount = decoded.events.length;
  const where = (seq: number | undefined): string => {
    const line = seq === undefined ? undefined : seq < 0 ? 1 : decoded.lineOf(seq);
    return line === undefined ? '' : `line ${line}`;
  };

  const validation: ValidationOptions = {};
  if (opts.placeholders === 'warn') {
    validation.onPlaceholder = ({ seq, path, token, eventType }) => {
      const line = seq < 0 ? 1 : decoded.lineOf(seq);
      const w: LogWarning = {
        code: 'PLACEHOLDER',
        message: `${line !== undefined ? `line ${line}: ` : ''}${seq < 0 ? 'header' : `${eventType} at seq ${seq}`} has the placeholder ${token} at ${path}`,
      };
      if (line !== undefined) w.line = line;
      if (seq >= 0) w.seq = seq;
      warnings.push(w);
    };
  }

  let repaired: EventDraft[] = [];
  const events = decoded.events;
  try {
    // Validate the stored events first (a repair must never paper over a defect), then close.
    const probe = Session.restore(decoded.header, events.slice(), { validation, clock: opts.clock ?? Date.now });
    if (opts.repair !== false && probe.trace.openTurn !== undefined) {
      repaired = interruptedTurnClosers(probe.events.slice(0, eventCount));
      warnings.push({
        code: 'OPEN_TURN',
        seq: eventCount - 1,
        message: `turn ${probe.trace.openTurn} was left open (the writer stopped mid-turn); crash repair closed it with ${repaired.map((d) => d.type).join(', ')}`,
      });
      // Same leniency as the first pass, but its placeholders were reported there already.
      const again: ValidationOptions = validation.onPlaceholder ? { onPlaceholder: () => {} } : {};
      const session = Session.restore(decoded.header, [...probe.events.slice(0, eventCount), ...repaired], { validation: again, clock: opts.clock ?? Date.now });
      return finish(session);
    }
    return finish(probe);
  } catch (e) {
    if (e instanceof SessionError && !e.details.line) {
      const w = where(e.details.seq ?? (e.code === 'INVALID_HEADER' ? -1 : undefined));
      const line = e.details.seq === undefined ? (e.code === 'INVALID_HEADER' ? 1 : undefined) : decoded.lineOf(e.details.seq);
      const prefix = [opts.file, w].filter(Boolean).join(':');
      throw new SessionError(e.code, prefix ? `${prefix}: ${e.message}` : e.message, { ...e.details, ...(line !== undefined ? { line } : {}), ...(opts.file ? { file: opts.file } : {}) }, { cause: e });
    }
    throw e;
  }

  function finish(session: Session): LoadedLog {
    const out: LoadedLog = {
      session,
      header: session.header,
      warnings,
      rowCount: decoded.rowCount,
      eventCount,
      repaired,
      lineOf: decoded.lineOf,
    };
    if (decoded.tornTail) out.tornTail = decoded.tornTail;
    return out;
  }
}
