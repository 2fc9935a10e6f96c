/**
 * Read-time import conversions for older v0 logs. Version 0 is pinned and
 * there are no migrations; these narrow conversions let logs written before a vocabulary change
 * load. Each conversion is reported, so nothing changes silently.
 */
export interface LegacyConversion {
  seq: number;
  what: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Convert one raw event in place where an old shape is recognised; returns what it did. */
export function importLegacy(e: Obj, sessionId: string): string | undefined {
  const seq = e.seq as number;
  const legacyId = `legacy-message:${sessionId}:${seq}`;
  switch (e.type) {
    case 'steering/message': {
      const d = e.data;
      if (!isObj(d)) return undefined;
      e.type = 'user/message';
      if (isObj(d.message)) {
        e.data = d.message;
      } else {
        const { turn: _turn, ...rest } = d;
        e.data = { role: 'user', ...rest };
      }
      if (e.surfaceOp === undefined) e.surfaceOp = 'append';
      const msg = e.data as Obj;
      if (msg.id === undefined) msg.id = legacyId;
      return 'legacy steering/message read as user/message';
    }
    case 'turn/start': {
      const d = e.data;
      if (isObj(d) && 'trigger' in d) {
        delete d.trigger;
        return 'legacy turn/start trigger dropped';
      }
      return undefined;
    }
    case 'turn/end': {
      const r = isObj(e.data) ? e.data.reason : undefined;
      if (isObj(r) && r.kind === 'aborted' && r.reason === undefined) {
        r.reason = { kind: 'legacy' };
        return 'legacy aborted turn/end given reason {kind:"legacy"}';
      }
      return undefined;
    }
    case 'user/message': {
      const d = e.data;
      if (isObj(d) && d.id === undefined) {
        d.id = legacyId;
        return `message without id given id "${legacyId}"`;
      }
      return undefined;
    }
    case 'assistant/message':
    case 'tool/result': {
      const m = isObj(e.data) ? e.data.message : undefined;
      if (isObj(m) && m.id === undefined) {
        m.id = legacyId;
        return `message without id given id "${legacyId}"`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}
