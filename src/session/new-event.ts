/**
 * A new event as `Session.append` builds it: the type and append options checked, the data
 * copied as lossless JSON, deep-frozen and validated against its type's shape, and the session
 * clock's time checked. Nothing about the log (seq order, surface, trace) is checked here.
 */
import type { SessionEvent, SurfaceOp } from './events.js';
import { SessionError } from './errors.js';
import { copyJson } from './json.js';
import { RESERVED_TYPES, reservedType, validateEventData, type ValidationOptions } from './validate.js';

const NO_VALIDATION: ValidationOptions = Object.freeze({});

/** Validate and freeze the event `Session.append` is asked for (no state changes; the log's own rules are checked at commit). */
export function buildEvent(type: string, data: unknown, seq: number, optsArg: unknown, clock: () => number): SessionEvent {
  if (typeof type !== 'string' || type.length === 0) {
    throw new SessionError('INVALID_EVENT', `event type must be a non-empty string, got ${typeof type === 'string' ? '""' : typeof type}`, {
      seq,
      rule: 'envelope',
    });
  }
  if (RESERVED_TYPES.has(type)) throw reservedType(type, seq);
  if (optsArg !== undefined && (typeof optsArg !== 'object' || optsArg === null || Array.isArray(optsArg))) {
    throw new SessionError(
      'INVALID_EVENT',
      `event "${type}" at seq ${seq}: append options must be an object ({surfaceOp, sourceEventSeqs, ignorable}) or omitted, ` +
        `got ${optsArg === null ? 'null' : Array.isArray(optsArg) ? 'an array' : typeof optsArg}`,
      { eventType: type, seq, rule: 'envelope' },
    );
  }
  const opts = optsArg as { surfaceOp?: SurfaceOp; sourceEventSeqs?: number[]; ignorable?: true } | undefined;
  const frozen = copyJson(data, type, '$.data', seq);
  validateEventData(type, seq, frozen, NO_VALIDATION);
  const event: Record<string, unknown> = { type, seq, time: clock(), data: frozen };
  if (opts !== undefined) {
    if (opts.ignorable !== undefined) {
      if (opts.ignorable !== true)
        throw new SessionError('INVALID_EVENT', `event "${type}" at seq ${seq}: ignorable must be true when given`, {
          eventType: type,
          seq,
          rule: 'envelope',
        });
      event.ignorable = true;
    }
    if (opts.surfaceOp !== undefined) event.surfaceOp = copyJson(opts.surfaceOp, type, '$.surfaceOp', seq);
    if (opts.sourceEventSeqs !== undefined) event.sourceEventSeqs = copyJson(opts.sourceEventSeqs, type, '$.sourceEventSeqs', seq);
  }
  const time = event.time;
  if (typeof time !== 'number' || !Number.isSafeInteger(time)) {
    throw new SessionError('INVALID_EVENT', `the session clock returned ${String(time)}; event times are integer epoch ms`, {
      eventType: type,
      seq,
      rule: 'envelope',
    });
  }
  return Object.freeze(event) as unknown as SessionEvent;
}
