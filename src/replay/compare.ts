/**
 * `compareLogs(recorded, replayed)`: how a replayed session log differs from the recording it
 * replays. Pure: two event lists in, a structured report and a readable summary out.
 *
 * Must match (any difference fails the replay):
 * - structure: the same turns, each with the same steps, attempts, and interleaving of tool calls
 *   and results;
 * - inputs: what each step entered (`user/message`s, ids ignored);
 * - chunks: every `assistant/chunk` of every attempt, exactly;
 * - assistant: the `assistant/message`s (ids ignored), with their usage, `interrupted` flag and
 *   which of the step's chunks they cite;
 * - toolCalls: callId, name and raw arguments, in order;
 * - endReasons: each turn's `turn/end` reason;
 * - retries: each step's `llm/retry` numbers and failure codes;
 * - todos: the `todo/write` lists.
 *
 * Reported, allowed to differ: tool results (the workspace may differ) and request headers
 * (tokenised fixtures hold `{{system}}`/`{{tools}}` placeholders, which match anything).
 *
 * Every other event type is tallied: a type the replay wrote fewer times than the recording is
 * listed as not reproduced (plugin events such as `session/title`, `hook/*`, `approval/*`), never
 * silently ignored.
 */
import type { SessionEvent } from '../session/events.js';
import { indexRecording, type RecordedLog, type RecordedStep } from '../session/recording.js';
import { firstDifference, preview, withoutIds, type PlaceholderHit } from '../session/json-diff.js';

export type MustMatchCategory = 'structure' | 'inputs' | 'chunks' | 'assistant' | 'toolCalls' | 'endReasons' | 'retries' | 'todos';
export const MUST_MATCH: readonly MustMatchCategory[] = [
  'structure',
  'inputs',
  'chunks',
  'assistant',
  'toolCalls',
  'endReasons',
  'retries',
  'todos',
];

export interface LogDifference {
  category: MustMatchCategory | 'toolResults' | 'headers';
  turn?: number;
  step?: number;
  /** e.g. `turn 1 step 2`. */
  where: string;
  path?: string;
  recorded?: unknown;
  replayed?: unknown;
  message: string;
}

export interface EventTally {
  type: string;
  recorded: number;
  replayed: number;
}

export interface PlaceholderNote {
  where: string;
  path: string;
  token: string;
}

export interface LogComparison {
  /** No difference in any must-match category. */
  matches: boolean;
  /** Must-match differences. */
  differences: LogDifference[];
  /** Per-call tool result differences (allowed). */
  toolResults: LogDifference[];
  /** Request header differences other than placeholders (allowed). */
  headers: LogDifference[];
  placeholders: PlaceholderNote[];
  /** Event types the recording has more of than the replay. */
  notReproduced: EventTally[];
  /** Event types the replay has more of than the recording. */
  extra: EventTally[];
  /** How many items each must-match category compared (so a vacuous match is visible). */
  checked: Record<MustMatchCategory, number>;
  counts: { recorded: LogCounts; replayed: LogCounts };
  summary: string;
}

export interface LogCounts {
  turns: number;
  steps: number;
  attempts: number;
  chunks: number;
  toolCalls: number;
}

type LogLike = readonly SessionEvent[] | { readonly events: readonly SessionEvent[] };

/** Types the categories above compare, and the loader's seed marker (not an interaction event). */
const ACCOUNTED = new Set([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'todo/write',
  'llm/retry',
  'request/header',
  'session/end-seed',
]);

function eventsOf(log: LogLike): readonly SessionEvent[] {
  return Array.isArray(log) ? log : (log as { events: readonly SessionEvent[] }).events;
}

export function compareLogs(recorded: LogLike, replayed: LogLike): LogComparison {
  const a = indexRecording(eventsOf(recorded));
  const b = indexRecording(eventsOf(replayed));
  const c = new Collector();

  compareTurns(a, b, c);
  compareHeaders(a, b, c);
  const { notReproduced, extra } = tally(a.events, b.events);

  const out: Omit<LogComparison, 'summary'> = {
    matches: c.differences.length === 0,
    differences: c.differences,
    toolResults: c.toolResults,
    headers: c.headers,
    placeholders: c.placeholders,
    notReproduced,
    extra,
    checked: c.checked,
    counts: { recorded: countsOf(a), replayed: countsOf(b) },
  };
  return { ...out, summary: summarize(out) };
}

class Collector {
  differences: LogDifference[] = [];
  toolResults: LogDifference[] = [];
  headers: LogDifference[] = [];
  placeholders: PlaceholderNote[] = [];
  checked = Object.fromEntries(MUST_MATCH.map((k) => [k, 0])) as Record<MustMatchCategory, number>;

  /** Compare one item of a category; keeps the first differing path. */
  item(
    category: LogDifference['category'],
    where: string,
    what: string,
    recorded: unknown,
    replayed: unknown,
    ids: { turn?: number; step?: number } = {},
  ): boolean {
    if (category !== 'toolResults' && category !== 'headers') this.checked[category]++;
    const hits: PlaceholderHit[] | undefined = category === 'headers' ? [] : undefined;
    const d = firstDifference(recorded, replayed, { path: what, ...(hits ? { placeholders: hits } : {}) });
    for (const h of hits ?? []) this.placeholders.push({ where, path: h.path, token: h.token });
    if (!d) return true;
    this.add({
      category,
      where,
      path: d.path,
      recorded: d.recorded,
      replayed: d.live,
      message: `${where}: ${what} first differs at ${d.path}: recorded ${preview(d.recorded)}, replayed ${preview(d.live)}`,
      ...ids,
    });
    return false;
  }

  add(d: LogDifference): void {
    if (d.category === 'toolResults') this.toolResults.push(d);
    else if (d.category === 'headers') this.headers.push(d);
    else this.differences.push(d);
  }
}

function compareTurns(a: RecordedLog, b: RecordedLog, c: Collector): void {
  c.item('structure', 'log', 'surfaceReplacements', a.replacements.length, b.replacements.length);
  c.item('inputs', 'log', 'inputsOutsideSteps', a.outsideInputs.length, b.outsideInputs.length);
  const turnNumbers = [...new Set([...a.turns.map((t) => t.turn), ...b.turns.map((t) => t.turn)])].sort((x, y) => x - y);
  for (const n of turnNumbers) {
    const ra = a.turn(n);
    const rb = b.turn(n);
    c.checked.structure++;
    if (!ra || !rb) {
      c.add({
        category: 'structure',
        turn: n,
        where: `turn ${n}`,
        message: ra ? `turn ${n} is recorded but was not replayed` : `the replay ran a turn ${n} the recording does not have`,
      });
      continue;
    }
    c.item('endReasons', `turn ${n}`, 'reason', ra.reason, rb.reason, { turn: n });
    const steps = [...new Set([...ra.steps.map((s) => s.step), ...rb.steps.map((s) => s.step)])].sort((x, y) => x - y);
    for (const s of steps) {
      const sa = ra.steps.find((x) => x.step === s);
      const sb = rb.steps.find((x) => x.step === s);
      const where = `turn ${n} step ${s}`;
      c.checked.structure++;
      if (!sa || !sb) {
        c.add({
          category: 'structure',
          turn: n,
          step: s,
          where,
          message: sa ? `${where} is recorded but was not replayed` : `the replay ran ${where}, which the recording does not have`,
        });
        continue;
      }
      compareStep(a, sa, b, sb, where, c, { turn: n, step: s });
    }
  }
}

function compareStep(
  a: RecordedLog,
  sa: RecordedStep,
  b: RecordedLog,
  sb: RecordedStep,
  where: string,
  c: Collector,
  ids: { turn: number; step: number },
): void {
  c.item('inputs', where, 'inputs', inputsView(a, sa), inputsView(b, sb), ids);
  c.item('structure', where, 'attempts', sa.attempts.length, sb.attempts.length, ids);
  c.item('structure', where, 'toolOrder', toolOrder(sa), toolOrder(sb), ids);
  c.item(
    'chunks',
    where,
    'chunks',
    sa.attempts.flatMap((x) => x.chunks),
    sb.attempts.flatMap((x) => x.chunks),
    ids,
  );
  c.item('assistant', where, 'assistant', assistantView(sa), assistantView(sb), ids);
  c.item('toolCalls', where, 'toolCalls', sa.toolCalls.map(callView), sb.toolCalls.map(callView), ids);
  c.item(
    'retries',
    where,
    'retries',
    sa.retries.map((r) => ({ retry: r.retry, code: r.failure.code })),
    sb.retries.map((r) => ({ retry: r.retry, code: r.failure.code })),
    ids,
  );
  c.item('todos', where, 'todos', sa.todos, sb.todos, ids);

  const replayedResults = new Map(sb.toolCalls.map((x) => [x.callId, x.result]));
  for (const call of sa.toolCalls) {
    const r = replayedResults.get(call.callId);
    c.item('toolResults', `${where} call ${call.callId}`, 'result', resultView(call.result), resultView(r), ids);
  }
}

/**
 * What a step put in front of the model: the messages it entered, and any a plugin wrote later in
 * the step (with how they entered the surface: appended, or replacing earlier history).
 */
function inputsView(log: RecordedLog, s: RecordedStep): unknown {
  const late = s.lateInputs.map((seq) => {
    const e = log.events[seq];
    if (e?.type !== 'user/message') return undefined;
    const { id: _id, ...message } = e.data;
    return { message, surfaceOp: e.surfaceOp === 'append' ? 'append' : 'replace' };
  });
  return { entered: withoutIds(s.entered), late };
}

/** An assistant message as it must replay: no id, and its citations as positions among the step's chunks. */
function assistantView(s: RecordedStep): unknown[] {
  const position = new Map<number, number>();
  let i = 0;
  for (const a of s.attempts) for (const seq of a.chunkSeqs) position.set(seq, i++);
  return s.assistant.map((e) => {
    const { id: _id, ...message } = e.data.message;
    return {
      message,
      usage: e.data.usage,
      interrupted: e.data.interrupted,
      cites: (e.sourceEventSeqs ?? []).map((seq) => position.get(seq) ?? `seq ${seq} (not a chunk of this step)`),
    };
  });
}

/** How calls and results interleave: side-by-side calls log `call call result result`. */
function toolOrder(s: RecordedStep): string[] {
  const marks: [number, string][] = [];
  for (const c of s.toolCalls) {
    marks.push([c.callSeq, `call ${c.callId}`]);
    if (c.result) marks.push([c.result.seq, `result ${c.callId}`]);
  }
  return marks.sort((x, y) => x[0] - y[0]).map((m) => m[1]);
}

function callView(x: { callId: string; name: string; arguments: string }): unknown {
  return { callId: x.callId, name: x.name, arguments: x.arguments };
}

function resultView(e: SessionEvent<'tool/result'> | undefined): unknown {
  if (!e) return undefined;
  const { id: _id, ...message } = e.data.message;
  return { message, error: e.data.error, meta: e.data.meta };
}

function compareHeaders(a: RecordedLog, b: RecordedLog, c: Collector): void {
  const n = Math.max(a.headers.length, b.headers.length);
  for (let i = 0; i < n; i++) {
    const ha = a.headers[i];
    const hb = b.headers[i];
    c.item('headers', `request/header #${i + 1}`, 'header', ha && headerView(a, ha), hb && headerView(b, hb));
  }
}

function headerView(log: RecordedLog, h: RecordedLog['headers'][number]): unknown {
  const e = log.events[h.seq];
  return { reason: e?.type === 'request/header' ? e.data.reason : undefined, ...h.header };
}

function tally(a: readonly SessionEvent[], b: readonly SessionEvent[]): { notReproduced: EventTally[]; extra: EventTally[] } {
  const counts = new Map<string, EventTally>();
  const bump = (type: string, side: 'recorded' | 'replayed'): void => {
    if (ACCOUNTED.has(type)) return;
    const t = counts.get(type) ?? { type, recorded: 0, replayed: 0 };
    t[side]++;
    counts.set(type, t);
  };
  for (const e of a) bump(e.type, 'recorded');
  for (const e of b) bump(e.type, 'replayed');
  const all = [...counts.values()].sort((x, y) => x.type.localeCompare(y.type));
  return { notReproduced: all.filter((t) => t.recorded > t.replayed), extra: all.filter((t) => t.replayed > t.recorded) };
}

function countsOf(log: RecordedLog): LogCounts {
  const steps = log.turns.flatMap((t) => t.steps);
  return {
    turns: log.turns.length,
    steps: steps.length,
    attempts: log.attempts.length,
    chunks: log.attempts.reduce((n, a) => n + a.chunks.length, 0),
    toolCalls: steps.reduce((n, s) => n + s.toolCalls.length, 0),
  };
}

function summarize(r: Omit<LogComparison, 'summary'>): string {
  const lines: string[] = [];
  const k = r.counts.recorded;
  const counts =
    `recorded ${k.turns} turn(s), ${k.steps} step(s), ${k.attempts}` + ` attempt(s), ${k.chunks} chunk(s), ${k.toolCalls} tool call(s)`;
  lines.push(r.matches ? `MATCH (${counts})` : `DIFFERS: ${r.differences.length} must-match difference(s) (${counts})`);
  for (const cat of MUST_MATCH) {
    const ds = r.differences.filter((d) => d.category === cat);
    lines.push(`  ${cat}: ${ds.length === 0 ? 'ok' : `${ds.length} difference(s)`}`);
    for (const d of ds.slice(0, 3)) lines.push(`    - ${d.message}`);
  }
  lines.push(`  tool results: ${r.toolResults.length === 0 ? 'same' : `${r.toolResults.length} differ (allowed)`}`);
  for (const d of r.toolResults.slice(0, 3)) lines.push(`    - ${d.message}`);
  if (r.headers.length > 0) {
    lines.push(`  request headers: ${r.headers.length} differ (allowed)`);
    for (const d of r.headers.slice(0, 3)) lines.push(`    - ${d.message}`);
  }
  if (r.placeholders.length > 0)
    lines.push(`  placeholders matched: ${[...new Set(r.placeholders.map((p) => `${p.path}=${p.token}`))].join(', ')}`);
  if (r.notReproduced.length > 0)
    lines.push(`  not reproduced: ${r.notReproduced.map((t) => `${t.type} (recorded ${t.recorded}, replayed ${t.replayed})`).join(', ')}`);
  if (r.extra.length > 0)
    lines.push(`  only in the replay: ${r.extra.map((t) => `${t.type} (recorded ${t.recorded}, replayed ${t.replayed})`).join(', ')}`);
  return lines.join('\n');
}
