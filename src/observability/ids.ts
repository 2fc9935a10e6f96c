/**
 * Deterministic trace and span ids. They are a hash of (session id, seq), never random, so
 * exporting the same log twice (or live, then offline) sends the same ids and a receiver can
 * dedupe or upsert. A turn's trace id comes from its `turn/start` seq; a span's id from the seq
 * of the first event of its unit, which no other unit shares.
 */
import { createHash } from 'node:crypto';

function digest(kind: string, sessionId: string, seq: number, hexChars: number): string {
  // The length prefix keeps ("ab", 1) and ("a", "b1") apart whatever the id contains.
  let salt = 0;
  for (;;) {
    const h = createHash('sha256')
      .update(`dsh/${kind}/v1\n${sessionId.length}:${sessionId}\n${seq}\n${salt}`)
      .digest('hex')
      .slice(0, hexChars);
    // An all-zero id is invalid in OTel; with sha256 this loop runs once.
    if (!/^0+$/.test(h)) return h;
    salt++;
  }
}

/** 32 lowercase hex characters (16 bytes). */
export function traceIdFor(sessionId: string, turnStartSeq: number): string {
  return digest('trace', sessionId, turnStartSeq, 32);
}

/** 16 lowercase hex characters (8 bytes). */
export function spanIdFor(sessionId: string, firstSeq: number): string {
  return digest('span', sessionId, firstSeq, 16);
}

/**
 * One trace per session (`traces: 'session'`): the trace id, and the id of the session span that
 * is the parent of every turn span. Kinds of their own, so they never equal a per-turn id.
 */
export function sessionTraceIdFor(sessionId: string): string {
  return digest('session-trace', sessionId, 0, 32);
}

export function sessionSpanIdFor(sessionId: string): string {
  return digest('session-span', sessionId, 0, 16);
}
