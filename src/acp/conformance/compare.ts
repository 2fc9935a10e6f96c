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
 * Then each expected message must match one of ours later than the previous match, as a JSON
 * subset: an object matches one holding each of its keys with a matching value (ours may add
 * keys: a richer agent says more), an array matches one holding matches of its elements in the
 * same order (ours may offer more permission options), anything else must be equal. Two
 * allowances, both computed from the data: in the `initialize` result, dsh's `agentInfo` (its own
 * name) and the capabilities dsh declares `false` are not required (an agent that can do more says
 * so); and a prompt dsh answered `end_turn` may be answered `max_tokens` when its recorded turn
 * ended `max-tokens` (ACP's stop reason for that; dsh reports `end_turn` for it).
 */

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface SubsetDifference {
  /** JSON path of the first difference, rooted at the message (`$.params.update.content.text`). */
  path: string;
  expected: unknown;
  actual: unknown;
}

const key = (path: string, k: string): string => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/** Undefined when `actual` holds `expected` (see the module comment); else the first difference. */
export function subsetDifference(expected: unknown, actual: unknown, path = '$'): SubsetDifference | undefined {
  if (isRecord(expected)) {
    if (!isRecord(actual)) return { path, expected, actual };
    for (const [k, v] of Object.entries(expected)) {
      if (!(k in actual)) return { path: key(path, k), expected: v, actual: undefined };
      const d = subsetDifference(v, actual[k], key(path, k));
      if (d) return d;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return { path, expected, actual };
    let j = 0;
    for (let i = 0; i < expected.length; i++) {
      let first: SubsetDifference | undefined;
      let found = false;
      for (; j < actual.length; j++) {
        const d = subsetDifference(expected[i], actual[j], `${path}[${j}]`);
        if (!d) {
          found = true;
          j++;
          break;
        }
        first ??= d;
      }
      if (!found) return first ?? { path: `${path}[${i}]`, expected: expected[i], actual: undefined };
    }
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : { path, expected, actual };
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
  difference?: SubsetDifference;
}

function sameKind(a: Json, b: Json): boolean {
  if ('method' in a) {
    if (a.method !== b.method) return false;
    if (a.method !== 'session/update') return true;
    const ua = isRecord(a.params) && isRecord(a.params.update) ? a.params.update.sessionUpdate : undefined;
    const ub = isRecord(b.params) && isRecord(b.params.update) ? b.params.update.sessionUpdate : undefined;
    return ua === ub;
  }
  return !('method' in b) && a.id === b.id;
}

/** The first expected message ours lacks (in order), or undefined when every one is there. */
export function firstMismatch(expected: readonly Json[], ours: readonly Json[], turnEnds: readonly string[] = []): Mismatch | undefined {
  let j = 0;
  let prompts = 0;
  for (let i = 0; i < expected.length; i++) {
    let want = expected[i]!;
    if (isRecord(want.result) && 'protocolVersion' in want.result) want = { ...want, result: initializeRequirement(want.result) };
    let alt: Json | undefined;
    if (isRecord(want.result) && typeof want.result.stopReason === 'string') {
      prompts++;
      if (want.result.stopReason === 'end_turn' && turnEnds[prompts - 1] === 'max-tokens')
        alt = { ...want, result: { ...want.result, stopReason: 'max_tokens' } };
    }
    let found = -1;
    for (let k = j; k < ours.length; k++) {
      if (!subsetDifference(want, ours[k]) || (alt && !subsetDifference(alt, ours[k]))) {
        found = k;
        break;
      }
    }
    if (found < 0) {
      const m: Mismatch = { line: i + 1, expected: expected[i] };
      const nearest = ours.slice(j).find((o) => sameKind(want, o));
      if (alt && nearest !== undefined && !subsetDifference(alt, nearest)) want = alt;
      if (nearest !== undefined) {
        m.nearest = nearest;
        const d = subsetDifference(want, nearest);
        if (d) m.difference = d;
      }
      return m;
    }
    j = found + 1;
  }
  return undefined;
}
