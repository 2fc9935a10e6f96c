/**
 * Read-time upgrades of older v0 logs. Format version 0 has no migrations, but dsh (0.1.0-rc.8)
 * upgrades a handful of shapes written before a vocabulary change when it loads a log, and
 * refuses a malformed old shape rather than guessing. The same upgrades apply here, with the same
 * boundaries (facts from dsh's loader; the code is ours):
 *
 * - `steering/message` → `user/message`: `{turn, message}` unwraps the message; `{turn, content,
 *   source}` becomes a message with a minted id and role `user`. Any other key set is refused.
 * - `turn/start` with a `trigger`: `{turn, trigger:{kind,…}}` keeps `{turn}`; other keys refused.
 * - `turn/end` (every one, old or current): data holds exactly `turn` and `reason`, the reason a
 *   `kind` string. Old reasons are rewritten: `aborted` without a cause → cause `legacy`;
 *   `disposed` → `aborted` with cause `disposed`; `error` with `step` and `failure` (or `message`
 *   and `code?`) → `error` with that failure. Other kinds pass unchanged.
 * - Messages written before message identities: a `user/message` with `content` and `source`
 *   but no `id`, `role` or `message` gets id `legacy-message:<session>:<seq>` and role `user`; an
 *   `assistant/message` with `content` and `provenance` but no `message` is wrapped into a
 *   message (source = provenance with kind `model`); a `tool/result` with `callId`, `content`
 *   and `isError` but no `message` is wrapped into a one-block tool-result message, whose id is
 *   inherited from the message it replaces (a replace of a span keeps the id at its start).
 *
 * A current-looking event is never touched: validation then judges it as it is. Each upgrade is
 * reported, so nothing changes silently.
 */
import { SessionError } from '../errors.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const isTurn = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/** True when `o` has every key of `required` and no key outside `required` ∪ `optional`. */
function onlyKeys(o: Obj, required: readonly string[], optional: readonly string[] = []): boolean {
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return false;
  for (const k of required) if (!has(o, k)) return false;
  return true;
}

/** Upgrades one log's events in order (the tool-result rule needs ids of earlier messages). */
export class LegacyImporter {
  /** Message id of every surface event seen so far, by seq. */
  private readonly messageIds = new Map<number, string>();

  /** `earlier` finds events read before this importer started (a tail reader picking up a log). */
  constructor(
    private readonly sessionId: string,
    private readonly earlier?: (seq: number) => unknown,
  ) {}

  /**
   * Upgrade one raw event in place where an old shape is recognised; returns what it did, or
   * undefined. Throws `SessionError` (`INVALID_EVENT`, rule `legacy-import`) for an old shape
   * that is malformed (dsh refuses those too).
   */
  import(e: Obj): string | undefined {
    let what: string | undefined;
    try {
      what = this.upgrade(e);
    } finally {
      this.remember(e);
    }
    return what;
  }

  private legacyId(seq: number): string {
    return `legacy-message:${this.sessionId}:${seq}`;
  }

  private malformed(e: Obj, what: string, path = '$.data'): never {
    const seq = typeof e.seq === 'number' ? e.seq : -1;
    throw new SessionError(
      'INVALID_EVENT',
      `event "${String(e.type)}" at seq ${seq} is a malformed ${what} (an old shape dsh upgrades only when it is whole)`,
      {
        eventType: String(e.type),
        seq,
        path,
        rule: 'legacy-import',
      },
    );
  }

  private earlierId(seq: number): string | undefined {
    const e = this.earlier?.(seq);
    if (!isObj(e) || !isObj(e.data)) return undefined;
    const m = e.type === 'user/message' ? e.data : e.data.message;
    return isObj(m) && typeof m.id === 'string' ? m.id : undefined;
  }

  private remember(e: Obj): void {
    if (typeof e.seq !== 'number' || !isObj(e.data)) return;
    const m = e.type === 'user/message' ? e.data : e.type === 'assistant/message' || e.type === 'tool/result' ? e.data.message : undefined;
    if (isObj(m) && typeof m.id === 'string') this.messageIds.set(e.seq, m.id);
  }

  private upgrade(e: Obj): string | undefined {
    const seq = e.seq as number;
    const d = e.data;
    switch (e.type) {
      case 'steering/message': {
        if (!isObj(d)) return this.malformed(e, 'steering/message');
        if (isObj(d.message) && typeof d.turn === 'number' && Number.isSafeInteger(d.turn) && onlyKeys(d, ['turn', 'message'])) {
          e.type = 'user/message';
          e.data = d.message;
          return 'legacy steering/message read as user/message';
        }
        if (!(typeof d.turn === 'number' && Number.isSafeInteger(d.turn)) || !onlyKeys(d, ['turn', 'content', 'source']))
          return this.malformed(e, 'steering/message');
        e.type = 'user/message';
        e.data = { content: d.content, source: d.source, id: this.legacyId(seq), role: 'user' };
        return `legacy steering/message read as user/message with id "${this.legacyId(seq)}"`;
      }
      case 'turn/start': {
        if (!isObj(d) || !has(d, 'trigger')) return undefined;
        const trigger = d.trigger;
        if (
          !isTurn(d.turn) ||
          !onlyKeys(d, ['turn', 'trigger']) ||
          !isObj(trigger) ||
          typeof trigger.kind !== 'string' ||
          trigger.kind === ''
        ) {
          return this.malformed(e, 'turn/start with a trigger');
        }
        delete d.trigger;
        return 'legacy turn/start trigger dropped';
      }
      case 'turn/end':
        return this.turnEnd(e);
      case 'user/message': {
        if (!isObj(d) || has(d, 'id') || has(d, 'role') || has(d, 'message') || !has(d, 'content') || !has(d, 'source')) return undefined;
        d.id = this.legacyId(seq);
        d.role = 'user';
        return `message without id or role given id "${this.legacyId(seq)}" and role "user"`;
      }
      case 'assistant/message': {
        if (!isObj(d) || has(d, 'message') || !has(d, 'content') || !has(d, 'provenance')) return undefined;
        const { content, provenance, ...rest } = d;
        e.data = {
          ...rest,
          message: {
            id: this.legacyId(seq),
            role: 'assistant',
            content,
            source: { ...(isObj(provenance) ? provenance : {}), kind: 'model' },
          },
        };
        return `older assistant/message layout (content, provenance) wrapped into a message with id "${this.legacyId(seq)}"`;
      }
      case 'tool/result': {
        if (!isObj(d) || has(d, 'message') || !has(d, 'callId') || !has(d, 'content') || !has(d, 'isError')) return undefined;
        const { callId, content, isError, ...rest } = d;
        const op = e.surfaceOp;
        const start = isObj(op) && op.op === 'replace' && typeof op.start === 'number' ? op.start : undefined;
        const id = start === undefined ? this.legacyId(seq) : (this.messageIds.get(start) ?? this.earlierId(start));
        // Key order as dsh writes it. An inherited id that does not exist stays absent, and
        // validation then refuses the message.
        const message: Obj = id !== undefined ? { id } : {};
        message.role = 'user';
        message.content = [{ type: 'tool-result', toolCallId: callId, content, isError }];
        message.source = { kind: 'tool', callId };
        e.data = { ...rest, message };
        return `older tool/result layout (callId, content, isError) wrapped into a message${id !== undefined ? ` with id "${id}"` : ''}`;
      }
      default:
        return undefined;
    }
  }

  private turnEnd(e: Obj): string | undefined {
    const d = e.data;
    if (!isObj(d)) return undefined; // not an object: the shape check refuses it
    const reason = d.reason;
    if (!isTurn(d.turn) || !onlyKeys(d, ['turn', 'reason']) || !isObj(reason) || typeof reason.kind !== 'string')
      return this.malformed(e, 'turn/end');
    switch (reason.kind) {
      case 'completed':
      case 'blocked':
      case 'max-tokens':
      case 'interrupted':
        if (!onlyKeys(reason, ['kind'])) return this.malformed(e, 'turn/end', '$.data.reason');
        return undefined;
      case 'aborted':
        if (has(reason, 'reason')) return undefined;
        if (!onlyKeys(reason, ['kind'])) return this.malformed(e, 'turn/end', '$.data.reason');
        d.reason = { kind: 'aborted', reason: { kind: 'legacy' } };
        return 'legacy aborted turn/end given reason {kind:"legacy"}';
      case 'disposed':
        if (!onlyKeys(reason, ['kind'])) return this.malformed(e, 'turn/end', '$.data.reason');
        d.reason = { kind: 'aborted', reason: { kind: 'disposed' } };
        return 'legacy turn/end reason "disposed" read as aborted (cause disposed)';
      case 'error': {
        if (has(reason, 'error')) return undefined;
        const step = reason.step;
        if (!(typeof step === 'number' && Number.isSafeInteger(step) && step >= 0))
          return this.malformed(e, 'turn/end', '$.data.reason.step');
        const f = reason.failure;
        if (
          isObj(f) &&
          onlyKeys(reason, ['kind', 'step', 'failure']) &&
          onlyKeys(f, ['message', 'code'], ['status', 'providerRetryAfterMs', 'requestId']) &&
          typeof f.message === 'string' &&
          typeof f.code === 'string' &&
          (f.status === undefined || typeof f.status === 'number') &&
          (f.providerRetryAfterMs === undefined || typeof f.providerRetryAfterMs === 'number') &&
          (f.requestId === undefined || typeof f.requestId === 'string')
        ) {
          d.reason = { kind: 'error', error: f };
          return 'legacy error turn/end (step, failure) read as {kind:"error", error}';
        }
        const keys = reason.code === undefined ? ['kind', 'step', 'message'] : ['kind', 'step', 'message', 'code'];
        if (
          !onlyKeys(reason, keys) ||
          typeof reason.message !== 'string' ||
          (reason.code !== undefined && typeof reason.code !== 'string')
        ) {
          return this.malformed(e, 'turn/end', '$.data.reason');
        }
        d.reason = { kind: 'error', error: { message: reason.message, code: typeof reason.code === 'string' ? reason.code : 'UNKNOWN' } };
        return 'legacy error turn/end (step, message, code) read as {kind:"error", error}';
      }
      default:
        return undefined;
    }
  }
}
