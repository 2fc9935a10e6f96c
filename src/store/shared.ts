/**
 * Rules every `Store` implementation applies the same way, written once: which session a fork
 * seeds from, and how write failures reach their listeners.
 */
import { Session, SessionError, type LoadedLog, type SessionOptions } from '../session/index.js';
import { KNOWN_EVENT_TYPES } from '../session/index.js';
import { StoreError, type StoreErrorDetails } from './errors.js';
import type { ErrorListener, ImportedLog, InspectOptions } from './interface.js';

/**
 * The child of a fork from `sourceId` through `boundary`. From the live session when the source
 * is open in this store (`live`); otherwise from the log as stored.
 *
 * Invariant: a fork's seed is what the parent's log holds, seq for seq. A session not open here
 * is read as stored (another process may be writing it): no crash-repair closers, and nothing
 * past its last stored event (the loader's end-of-seed marker is not stored), so a fork at the
 * end of a turn still open fails with OPEN_TURN instead of inheriting closers the parent never
 * wrote.
 */
export async function forkChild(
  sourceId: string,
  boundary: number | undefined,
  fopts: SessionOptions,
  live: Session | undefined,
  inspect: (id: string, opts: InspectOptions) => Promise<LoadedLog>,
): Promise<Session> {
  if (live) return live.fork(boundary, fopts);
  const load = await inspect(sourceId, { repair: false });
  const stored = load.eventCount;
  const b = boundary ?? stored - 1;
  if (Number.isSafeInteger(b) && b >= stored && b < load.session.length) {
    throw new SessionError(
      'INVALID_BOUNDARY',
      `fork boundary ${b} is not a seq of session ${JSON.stringify(sourceId)}'s log (0…${stored - 1})`,
      { seq: b, rule: 'fork-boundary' },
    );
  }
  return load.session.fork(b, fopts);
}

/** Write-failure listeners of an open session; with none, failures go to stderr. */
export class ErrorListeners {
  private listeners: ErrorListener[] = [];

  constructor(private readonly prefix: string) {}

  add(listener: ErrorListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  report(error: StoreError): void {
    if (this.listeners.length === 0) {
      process.stderr.write(`[dsh] ${this.prefix}: ${error.message}\n`);
      return;
    }
    for (const l of this.listeners) {
      try {
        l(error);
      } catch {
        // one broken listener must not hide the failure from the others
      }
    }
  }
}

/**
 * From now on every append to `session` is refused with `code` (a closing or fenced handle): no
 * event can commit that would not reach the store.
 */
export function refuseAppends(session: Session, code: 'CLOSED' | 'LEASE_LOST', why: string, details: StoreErrorDetails): void {
  session.addPreCommitCheck((c) => {
    throw new StoreError(code, `session ${session.id}: cannot append "${c.type}": ${why}`, { ...details, sessionId: session.id });
  });
}

/**
 * Check a session to be imported as a load checks it (header, every event, the trace and surface
 * rules); throws the session layer's error naming the seq. The events are copied, not kept.
 */
export function validateImport(log: ImportedLog, knownTypes?: ReadonlySet<string>): void {
  const unknown = log.events.find((e) => typeof e?.type === 'string' && e.ignorable !== true && !isKnownType(e.type, knownTypes));
  if (unknown) {
    throw new SessionError(
      'FORMAT_UNSUPPORTED',
      `event type "${unknown.type}" at seq ${unknown.seq} is unknown to this build and not marked ignorable`,
      { eventType: unknown.type, seq: unknown.seq, rule: 'known-types' },
    );
  }
  Session.create({ header: { ...log.header }, id: log.header.id, seed: log.events });
}

function isKnownType(type: string, knownTypes?: ReadonlySet<string>): boolean {
  return KNOWN_EVENT_TYPES.has(type) || knownTypes?.has(type) === true;
}
