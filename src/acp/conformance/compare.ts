/**
 * Does our stdout hold every message dsh wrote, in order, with the same content?
 *
 * Both sides are normalised first, for what is generated per run, never for content:
 * - our session ids become `{{sessionId}}` and the workspace path `{{cwd}}` (dsh's tokens);
 * - JSON-RPC ids are renumbered 1, 2, … by first appearance, separately for responses (to the
 *   client's requests) and for the agent's own requests (permission requests);
 * - our streamed `agent_message_chunk` / `agent_thought_chunk` deltas are joined per response and
 *   block (`messageId`, `_meta.dsh.block`) at the first delta's place: dsh sends one chunk per
 *   committed block, we stream the block as it arrives, and a client shows the same text.
 *
 * Then the one matcher of the conformance runners (src/replay/match.ts) checks that each
 * expected message appears among ours in order, as a superset (ours may add keys, and, arrays
 * compared `in-order`, more items: a richer agent says more, offers more permission options). Two
 * allowances, both computed from the data: in the `initialize` result, dsh's `agentInfo` (its own
 * name) and the capabilities dsh declares `false` are not required (an agent that can do more says
 * so); and a prompt dsh answered `end_turn` may be answered `max_tokens` when its recorded turn
 * ended `max-tokens` (ACP's stop reason for that; dsh reports `end_turn` for it).
 */

import { matchInOrder, oneOf, type Difference } from '../../replay/match.js';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function renumber(messages: Json[]): Json[] {
  const responses = new Map<unknown, number>();
  const requests = new Map<unknown, number>();
  return messages.map((m) => {
    if (!('id' in m) || m.id === null) return m;
    const map = 'method' in m ? requests : responses;
    if (!map.has(m.id)) map.set(m.id, map.size + 1);
    return { ...m, id: map.get(m.id) };
  });
}

/** Join the streamed deltas of one block into the chunk dsh would have sent. */
function coalesce(messages: Json[]): Json[] {
  const out: Json[] = [];
  const open = new Map<string, Json>();
  for (const m of messages) {
    const params = isRecord(m.params) ? m.params : undefined;
    const update = params && isRecord(params.update) ? params.update : undefined;
    const kind = update?.sessionUpdate;
    const content = update && isRecord(update.content) ? update.content : undefined;
    if (
      m.method === 'session/update' &&
      (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') &&
      typeof update?.messageId === 'string' &&
      content?.type === 'text'
    ) {
      const block = isRecord(update._meta) && isRecord(update._meta.dsh) ? update._meta.dsh.block : undefined;
      const k = JSON.stringify([params!.sessionId, kind, update.messageId, block]);
      const held = open.get(k);
      if (held) {
        const c = ((held.params as Json).update as Json).content as Json;
        c.text = `${String(c.text)}${String(content.text)}`;
        continue;
      }
      const copy = structuredClone(m);
      open.set(k, copy);
      out.push(copy);
      continue;
    }
    out.push(m);
  }
  return out;
}

function replaceAll(text: string, from: string, to: string): string {
  return from === '' ? text : text.split(from).join(to);
}

/** Our stdout, normalised (see the module comment). A line that is not JSON is kept as `{$text}`. */
export function normaliseOurs(stdout: string, ctx: { sessionIds: readonly string[]; cwd: string }): Json[] {
  const parsed = stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      let t = l;
      for (const id of ctx.sessionIds) t = replaceAll(t, JSON.stringify(id).slice(1, -1), '{{sessionId}}');
      t = replaceAll(t, JSON.stringify(ctx.cwd).slice(1, -1), '{{cwd}}');
      try {
        const v = JSON.parse(t) as unknown;
        return isRecord(v) ? v : { $text: t };
      } catch {
        return { $text: t };
      }
    });
  return coalesce(renumber(parsed));
}

export function normaliseExpected(expected: readonly Json[]): Json[] {
  return renumber([...expected]);
}

/** What dsh's initialize result requires of ours (see the module comment). */
function initializeRequirement(result: Json): Json {
  const r = structuredClone(result);
  delete r.agentInfo;
  const strip = (o: unknown): void => {
    if (!isRecord(o)) return;
    for (const [k, v] of Object.entries(o)) {
      if (v === false) delete o[k];
      else strip(v);
    }
  };
  strip(r.agentCapabilities);
  return r;
}

export interface Mismatch {
  /** 1-based line of stdout.expected.jsonl. */
  line: number;
  expected: unknown;
  /** Our next message of the same kind after the last match, and where it first differs. */
  nearest?: unknown;
  difference?: Difference;
}

/** The first expected message ours lacks (in order), or undefined when every one is there. */
export function firstMismatch(expected: readonly Json[], ours: readonly Json[], turnEnds: readonly string[] = []): Mismatch | undefined {
  let prompts = 0;
  const wanted = expected.map((m): unknown => {
    if (isRecord(m.result) && 'protocolVersion' in m.result) return { ...m, result: initializeRequirement(m.result) };
    if (isRecord(m.result) && typeof m.result.stopReason === 'string') {
      prompts++;
      if (m.result.stopReason === 'end_turn' && turnEnds[prompts - 1] === 'max-tokens')
        return oneOf(m, { ...m, result: { ...m.result, stopReason: 'max_tokens' } });
    }
    return m;
  });
  const { failure } = matchInOrder(wanted, ours, { arrays: 'in-order' });
  if (!failure) return undefined;
  const m: Mismatch = { line: failure.index + 1, expected: expected[failure.index] };
  if (failure.nearest) {
    m.nearest = failure.nearest.message;
    m.difference = failure.nearest.difference;
  }
  return m;
}
