/**
 * The offline mapping entry point: a whole session (a `Session`, a loaded JSONL log, or a bare
 * `{ id, events }`) to spans, with the options checked once for every caller.
 */
import { Session } from '../session/session.js';
import type { SessionEvent, SessionHeader } from '../session/events.js';
import type { LoadedLog } from '../session/codec/load.js';
import { OtelExportError } from './errors.js';
import { SpanMapper, type SessionIdentity } from './mapper.js';
import type { DshSpan, MappedTurn, MappingOptions } from './spans.js';

/** A session to export: live, loaded from JSONL, or events with the session's id. */
export type SessionInput = Session | LoadedLog | { id: string; header?: SessionHeader; events: readonly SessionEvent[] };

export interface MappedSession {
  sessionId: string;
  /** The exported turns, in log order (inherited turns left out unless asked for). */
  turns: MappedTurn[];
  spans: DshSpan[];
  /** Turns without `turn/end` (exported, ended at their last event, marked `dsh.incomplete`). */
  incompleteTurns: number;
  /** Turns a fork inherited from its parent and left out (`inherited: 'skip'`). */
  skippedTurns: number;
  /** With `traces: 'session'`: the session span, parent of every turn span (first in `spans`). */
  sessionSpan?: DshSpan;
}

const MIN_CONTENT_CAP = 256;

export function checkMappingOptions(opts: MappingOptions): void {
  if (opts.content !== undefined && opts.content !== 'none' && opts.content !== 'full') {
    throw new OtelExportError('INVALID_OPTIONS', `content must be 'none' or 'full', not ${JSON.stringify(opts.content)}`);
  }
  const cap = opts.maxContentLength;
  if (cap !== undefined && !(Number.isSafeInteger(cap) && cap >= MIN_CONTENT_CAP)) {
    throw new OtelExportError('INVALID_OPTIONS', `maxContentLength must be an integer ≥ ${MIN_CONTENT_CAP}, not ${String(cap)}`);
  }
  if (opts.inherited !== undefined && opts.inherited !== 'skip' && opts.inherited !== 'include') {
    throw new OtelExportError('INVALID_OPTIONS', `inherited must be 'skip' or 'include', not ${JSON.stringify(opts.inherited)}`);
  }
  if (opts.redact !== undefined && typeof opts.redact !== 'function')
    throw new OtelExportError('INVALID_OPTIONS', 'redact must be a function');
  if (opts.traces !== undefined && opts.traces !== 'turn' && opts.traces !== 'session') {
    throw new OtelExportError('INVALID_OPTIONS', `traces must be 'turn' or 'session', not ${JSON.stringify(opts.traces)}`);
  }
  for (const [route, url] of Object.entries(opts.endpoints ?? {})) {
    let ok = false;
    try {
      const u = new URL(url);
      ok = u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) throw new OtelExportError('INVALID_OPTIONS', `endpoints.${route} must be an http(s) URL, not ${JSON.stringify(url)}`);
  }
}

/** The identity and an event reader for any accepted input. */
export function readInput(input: SessionInput): { identity: SessionIdentity; length: number; at: (i: number) => SessionEvent } {
  if (input instanceof Session) return { identity: { id: input.id, header: input.header }, length: input.length, at: (i) => input.at(i)! };
  if (typeof input === 'object' && input !== null && 'session' in input && input.session instanceof Session) {
    const s = input.session;
    return { identity: { id: s.id, header: s.header }, length: s.length, at: (i) => s.at(i)! };
  }
  if (typeof input === 'object' && input !== null && 'events' in input && Array.isArray(input.events) && typeof input.id === 'string') {
    const events = input.events;
    const identity: SessionIdentity = input.header ? { id: input.id, header: input.header } : { id: input.id };
    return { identity, length: events.length, at: (i) => events[i]! };
  }
  throw new OtelExportError('INVALID_INPUT', 'expected a Session, a loaded log (loadJsonl / loadJsonlFile) or { id, events }');
}

/** Wrap a throwing redaction hook so the caller sees a typed error and knows nothing was sent. */
export function guardRedaction<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof OtelExportError) throw e;
    throw new OtelExportError(
      'REDACTION_FAILED',
      `the redaction hook threw, so nothing was exported: ${e instanceof Error ? e.message : String(e)}`,
      {},
      { cause: e },
    );
  }
}

/** Map a whole session. Pure: the same log and options give the same spans, ids and times. */
export function mapSession(input: SessionInput, opts: MappingOptions = {}): MappedSession {
  checkMappingOptions(opts);
  const { identity, length, at } = readInput(input);
  const mapper = new SpanMapper(identity, opts);
  const all: MappedTurn[] = [];
  guardRedaction(() => {
    for (let i = 0; i < length; i++) all.push(...mapper.push(at(i)));
    const open = mapper.openTurn();
    if (open) all.push(open);
  });
  const include = opts.inherited === 'include';
  const turns = all.filter((t) => include || !t.inherited);
  const spans = turns.flatMap((t) => t.spans);
  const out: MappedSession = {
    sessionId: identity.id,
    turns,
    spans,
    incompleteTurns: turns.filter((t) => t.incomplete).length,
    skippedTurns: all.length - turns.length,
  };
  if (opts.traces === 'session') {
    const root = guardRedaction(() => mapper.sessionSpan(turns));
    if (root) {
      out.sessionSpan = root;
      spans.unshift(root);
    }
  }
  return out;
}
