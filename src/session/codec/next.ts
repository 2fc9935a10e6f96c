/**
 * dsh's newer session formats (versions 1–4, dsh 0.1.3 to 0.2.x) read as format 0, in memory.
 *
 * Facts (from dsh's format notes and its V2–V4 logs; the code is ours):
 * - V1 keeps V0's rows (packed chunk rows, seq/time on every row); its header says `isSeeded`.
 * - V2–V4 write one event per row; a normalised snapshot drops `seq`/`time`, and then seq is the
 *   row's index after the header, which every reference in the file uses.
 * - The assistant stream lives inside `assistant/message.data.stream` (and `assistant/attempt`
 *   for a settled attempt without a message): raw chunks `{type:'chunk', time, chunk}` and
 *   delta runs `{type:'text-chunks'|'reasoning-chunks', time0, index, dt, texts}` /
 *   `{type:'tool-call-chunks', time0, index, dt, id, name?, args}`.
 * - V3 adds `system/message` (the system prompt as a surface event; V2 kept it in
 *   `request/header.data.header.system`) and spells replace ends `startSeq`/`endSeq`.
 * - V4 writes tool results as `role:'tool'` with top-level `toolCallId`/`content`/`isError`, and
 *   message sources as direct kinds (`system-prompt`, `runtime-context`, `compact-checkpoint`,
 *   `plugin:<name>`, a first-party producer's own name) where V3 wrote `{kind:'plugin', plugin}`.
 *
 * Format 0 keeps the stream as top-level `assistant/chunk` events before the message, which cites
 * them in `sourceEventSeqs`. So each stream is expanded into chunk events, every later event is
 * renumbered, and every declared seq reference is mapped through the same table. Events format 0
 * has no type for (`system/message`, `assistant/attempt`'s stream aside, team rooms, catalog and
 * delivery facts, …) are kept as `ignorable` events, so nothing is dropped; what was converted
 * is reported. A `system/message`'s text also becomes `header.system` of the request headers after
 * it, which is where format 0 keeps the prompt.
 */
import { SessionError } from '../errors.js';
import { KNOWN_EVENT_TYPES } from '../events.js';
import { preview, stringifyJson } from '../json.js';
import { lossyNumberError, type LogWarning } from './jsonl.js';
import { lossyNumber } from './numbers.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const NEXT_VERSIONS: ReadonlySet<number> = new Set([1, 2, 3, 4]);

export interface ConvertedLog {
  /** The log as format 0 JSONL (one event per line). */
  text: string;
  /** The format it was written in. */
  version: number;
  warnings: LogWarning[];
  /** Source line (1-based) of each line of `text` (index = converted line − 1). */
  sourceLine: number[];
}

/** The version of a header line, if it is a dsh header of format 1–4. */
export function nextVersionOf(firstLine: string): number | undefined {
  const t = firstLine.charCodeAt(0) === 0xfeff ? firstLine.slice(1) : firstLine;
  if (!t.includes('"session"')) return undefined;
  try {
    const h = JSON.parse(t) as unknown;
    return isObj(h) && h.type === 'session' && typeof h.version === 'number' && NEXT_VERSIONS.has(h.version) ? h.version : undefined;
  } catch {
    return undefined;
  }
}

function refuse(file: string | undefined, line: number, why: string, rule = 'format-next'): SessionError {
  const where = file ? `${file}:${line}` : `line ${line}`;
  return new SessionError('FORMAT_UNSUPPORTED', `${where}: ${why}`, { line, rule, ...(file ? { file } : {}) });
}

/** Format 0's header from a V1–V4 header. */
function header(h: Obj): Obj {
  const out: Obj = { type: 'session', version: 0, id: h.id, createdAt: h.createdAt };
  for (const k of ['cwd', 'parentSession', 'seedLength', 'origin', 'delegationDepth', 'agentPreset']) if (h[k] !== undefined) out[k] = h[k];
  if (out.delegationDepth === undefined) out.delegationDepth = 0;
  // The V3 preset rename (code → ptc) is undone: format 0 knows the preset as code.
  if (out.agentPreset === 'ptc') out.agentPreset = 'code';
  return out;
}

/** V4 direct source kinds back to format 0's plugin wrapper (user, model and tool stay). */
const SOURCE_PLUGIN: Record<string, string> = {
  'system-prompt': '@deepseek-ai/dsh-system-prompt',
  'runtime-context': '@deepseek-ai/dsh-system-prompt',
  'compact-checkpoint': 'compact',
  'ptc-mode': 'tools-code-mode',
  'compact-basic': 'compact-basic',
};

function source(s: unknown): unknown {
  if (!isObj(s) || typeof s.kind !== 'string') return s;
  const kind = s.kind;
  if (kind === 'user' || kind === 'model' || kind === 'tool' || kind === 'plugin') {
    return kind === 'plugin' && s.plugin === 'tools-ptc' ? { ...s, plugin: 'tools-code-mode' } : s;
  }
  const { kind: _k, ...rest } = s;
  const plugin = SOURCE_PLUGIN[kind] ?? (kind.startsWith('plugin:') ? kind.slice('plugin:'.length) : kind);
  return { kind: 'plugin', plugin, ...rest };
}

/** A message in format 0's shape: V4 tool results wrapped back into one tool-result block. */
function message(m: unknown): unknown {
  if (!isObj(m)) return m;
  if (m.role === 'tool') {
    const { role: _r, toolCallId, content, isError, source: src, id, ...extra } = m;
    const block: Obj = { type: 'tool-result', toolCallId, content };
    if (isError !== undefined) block.isError = isError;
    const out: Obj = { id, role: 'user', content: [block], source: source(src) };
    for (const [k, v] of Object.entries(extra)) out[k] = v;
    return out;
  }
  return 'source' in m ? { ...m, source: source(m.source) } : m;
}

interface Row {
  line: number;
  o: Obj;
}

/**
 * Convert a V1–V4 log's text to format 0 JSONL. Lines that do not parse, and everything after the
 * first of them, are passed on as they are: the format 0 reader then applies its torn-tail and
 * corruption rules to them, at their own lines.
 */
export function convertNextToV0(text: string, file?: string): ConvertedLog {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let first = strip(lines[0] ?? '');
  if (first.charCodeAt(0) === 0xfeff) first = first.slice(1);
  const h = JSON.parse(first) as Obj;
  const version = h.version as number;
  // Lossless on load: the rows are re-serialised below, which would hide a rounded number, so
  // every line's text is checked first, as the format 0 reader checks it.
  const lossyHeader = lossyNumber(first);
  if (lossyHeader !== undefined) throw lossyNumberError(lossyHeader, 'session', undefined, 1, file);
  const warnings: LogWarning[] = [
    {
      code: 'FORMAT_CONVERTED',
      line: 1,
      message:
        `written in dsh session format ${version}; read as format 0 in memory (streams as assistant/chunk events, seqs renumbered, ` +
        'newer event types kept as ignorable events)',
    },
  ];
  const head = header(h);
  const out: string[] = [''];
  const sourceLine: number[] = [1];

  if (version === 1) {
    // Format 1's rows are format 0's, and its physical header still says seedLength.
    if (h.isSeeded === true && head.seedLength === undefined)
      throw refuse(file, 1, 'a forked log of format 1 (isSeeded: true) without seedLength: its inherited cut is unknown');
    out[0] = stringifyJson(head);
    for (let i = 1; i < lines.length; i++) {
      out.push(strip(lines[i]!));
      sourceLine.push(i + 1);
    }
    return { text: `${out.join('\n')}\n`, version, warnings, sourceLine };
  }

  // Parse rows until the first that does not parse as an object; the rest goes on verbatim.
  const rows: Row[] = [];
  let rest = lines.length;
  for (let i = 1; i < lines.length; i++) {
    const l = strip(lines[i]!);
    if (l.trim() === '') continue;
    const v = parseRow(l, rows.length, i + 1, file);
    if (v === undefined) {
      rest = i;
      break;
    }
    rows.push({ line: i + 1, o: v });
  }

  const conv = new RowConverter(h);
  const events: { o: Obj; line: number }[] = [];
  for (const { line, o } of rows) for (const e of conv.row(o, line)) events.push({ o: e, line });
  if (conv.renamedIds > 0)
    warnings.push({
      code: 'FORMAT_CONVERTED',
      message:
        `${conv.renamedIds} message(s) shared a snapshot placeholder id with a different message; ` + 'each got its own id (placeholder#n)',
    });

  // A fork (isSeeded: true) marks its inherited cut with a session/end-seed {inherited: true}:
  // the events before the last such marker came from the parent. Format 0 says the same with
  // the header's seedLength (the count of inherited events; its marker sits at seq seedLength),
  // so the cut is the marker's new seq.
  if (h.isSeeded === true) {
    const cut = conv.inheritedCut;
    if (cut === undefined)
      throw refuse(
        file,
        1,
        `a forked log of format ${version} (isSeeded: true) with no session/end-seed {inherited: true}: its inherited cut is unknown`,
      );
    head.seedLength = cut.seq;
    warnings.push({
      code: 'FORMAT_CONVERTED',
      line: 1,
      message:
        `forked log (isSeeded: true): the inherited cut at the session/end-seed of line ${cut.line} is read as seedLength ` + `${cut.seq}`,
    });
  }
  out[0] = stringifyJson(head);
  for (const { o, line } of events) {
    out.push(stringifyJson(o));
    sourceLine.push(line);
  }
  const kept = conv.kept;
  if (kept.size > 0) {
    warnings.push({
      code: 'FORMAT_CONVERTED',
      message:
        'converted beyond renumbering (format 0 has no type or value for them; events kept as ignorable): ' +
        `${[...kept].map(([t, n]) => `${t.includes(' ') ? t : preview(t)} ×${n}`).join(', ')}`,
    });
  }
  for (let i = rest; i < lines.length; i++) {
    out.push(strip(lines[i]!));
    sourceLine.push(i + 1);
  }
  return { text: `${out.join('\n')}\n`, version, warnings, sourceLine };
}

/**
 * A V2–V4 row's text parsed, or undefined when it is not a JSON object with a type (the caller
 * passes it on for the format 0 reader to refuse or set aside as a torn tail). A number the
 * text cannot carry exactly is refused here: the row is re-serialised later, which would hide
 * the rounding.
 */
function parseRow(l: string, index: number, line: number, file: string | undefined): Obj | undefined {
  let v: unknown;
  try {
    v = JSON.parse(l);
  } catch {
    return undefined;
  }
  if (!isObj(v) || typeof v.type !== 'string') return undefined;
  const lossy = lossyNumber(l);
  if (lossy !== undefined) throw lossyNumberError(lossy, v.type, typeof v.seq === 'number' ? v.seq : index, line, file);
  return v;
}

/**
 * V2–V4 rows to format 0 events, one row at a time (references only ever point back, so one pass
 * does): the state is the renumbering table, the clock, the system prompt in force and the
 * placeholder ids seen. The whole-file conversion and the viewer's follow of a growing file
 * share it.
 */
class RowConverter {
  /** New seq of each old seq (the row index when rows carry no seq). */
  private readonly newSeq: number[] = [];
  private rows = 0;
  private seq = 0;
  private time: number;
  private system: string | undefined;
  private readonly ids = new PlaceholderIds();
  readonly kept = new Map<string, number>();
  /** The last session/end-seed {inherited: true}: its new seq and source line. */
  inheritedCut: { seq: number; line: number } | undefined;

  constructor(h: Obj) {
    this.time = typeof h.createdAt === 'number' ? h.createdAt : 0;
  }

  get renamedIds(): number {
    return this.ids.renamed;
  }

  private readonly map = (s: unknown): unknown =>
    typeof s === 'number' && Number.isSafeInteger(s) && s >= 0 && s < this.newSeq.length ? this.newSeq[s] : s;
  private readonly mapArr = (a: unknown): unknown => (Array.isArray(a) ? a.map(this.map) : a);

  private count(what: string): void {
    this.kept.set(what, (this.kept.get(what) ?? 0) + 1);
  }

  /** The format 0 events of one row (its stream's chunks first, then the event itself). */
  row(o: Obj, line: number): Obj[] {
    const { map, mapArr } = this;
    this.ids.distinct(o);
    const old = typeof o.seq === 'number' ? o.seq : this.rows;
    this.rows++;
    if (typeof o.time === 'number') this.time = o.time;
    const time = this.time;
    const d = isObj(o.data) ? o.data : undefined;
    const type = o.type as string;
    const out: Obj[] = [];
    // The stream first, as format 0 wrote it: chunk events before the message.
    const chunkSeqs: number[] = [];
    if ((type === 'assistant/message' || type === 'assistant/attempt') && d && Array.isArray(d.stream)) {
      for (const c of expandStream(d.stream, d.turn, d.step, time)) {
        chunkSeqs.push(this.seq);
        out.push({ type: 'assistant/chunk', seq: this.seq++, time: c.time, data: c.data });
      }
    }
    // An attempt becomes its chunks only; references to it land on its last chunk.
    if (type === 'assistant/attempt') {
      if (Number.isSafeInteger(old) && old >= 0) this.newSeq[old] = this.seq - 1;
      return out;
    }
    if (Number.isSafeInteger(old) && old >= 0) this.newSeq[old] = this.seq;

    const e: Obj = { type, seq: this.seq++, time };
    let data: unknown = o.data;
    if (d) data = eventData(type, d, map, mapArr);
    if (type === 'system/message' && d && isObj(d.message)) this.system = textOf(d.message);
    if (type === 'request/header' && isObj(data) && isObj(data.header) && data.header.system === undefined && this.system !== undefined) {
      data = { ...data, header: { ...data.header, system: this.system } };
    }
    if (type === 'request/header' && isObj(data) && data.reason === 'series') {
      // A header that starts a new series (after a compaction): format 0 calls it a change.
      data = { ...data, reason: 'change', startsSeries: true };
      this.count('request/header reason "series" (read as "change", startsSeries: true)');
    }
    if (type === 'session/end-seed' && d?.inherited === true) this.inheritedCut = { seq: e.seq as number, line };
    if (type === 'assistant/message' && isObj(data)) {
      e.data = data;
      e.surfaceOp = surfaceOp(o.surfaceOp, map);
      e.sourceEventSeqs = chunkSeqs;
    } else if (type === 'system/message') {
      // Format 0 has no system surface event: kept (ignorable), its surface fields in the data.
      const dd: Obj = { ...(data as Obj) };
      if (o.surfaceOp !== undefined) dd.surfaceOp = surfaceOp(o.surfaceOp, map);
      if (o.sourceEventSeqs !== undefined) dd.sourceEventSeqs = mapArr(o.sourceEventSeqs);
      e.data = dd;
      e.ignorable = true;
      this.count(type);
    } else {
      e.data = data;
      if (o.surfaceOp !== undefined) e.surfaceOp = surfaceOp(o.surfaceOp, map);
      if (o.sourceEventSeqs !== undefined) e.sourceEventSeqs = mapArr(o.sourceEventSeqs);
      const renamed = RENAMED[type];
      if (renamed) e.type = renamed;
      else if (!KNOWN_EVENT_TYPES.has(type) && o.ignorable !== true) {
        e.ignorable = true;
        this.count(type);
      }
      if (o.ignorable === true) e.ignorable = true;
    }
    out.push(e);
    return out;
  }
}

/**
 * Following a growing V2–V4 file (the viewer): the converter's state after the rows already
 * loaded, then each appended line converted to the format 0 lines it stands for, tagged with its
 * source line. A line that is not a JSON object is passed on as it is, for the format 0 decoder
 * to refuse at that line.
 */
export class NextTail {
  private constructor(
    private readonly conv: RowConverter,
    private line: number,
    private readonly file: string | undefined,
  ) {}

  /** The state after `text`: the header and the complete rows already loaded, of a V2–V4 log. */
  static after(text: string, file?: string): NextTail {
    const lines = text.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    let first = strip(lines[0] ?? '');
    if (first.charCodeAt(0) === 0xfeff) first = first.slice(1);
    const conv = new RowConverter(JSON.parse(first) as Obj);
    let rows = 0;
    for (let i = 1; i < lines.length; i++) {
      const l = strip(lines[i]!);
      if (l.trim() === '') continue;
      const o = parseRow(l, rows, i + 1, file);
      if (o === undefined) break;
      rows++;
      conv.row(o, i + 1);
    }
    return new NextTail(conv, lines.length + 1, file);
  }

  /** Complete appended lines (`text` ends with a newline), each with the format 0 lines it becomes. */
  convert(text: string): { line: number; lines: string[] }[] {
    const out: { line: number; lines: string[] }[] = [];
    const lines = text.split('\n');
    lines.pop();
    for (const raw of lines) {
      const line = this.line++;
      const l = strip(raw);
      if (l.trim() === '') continue;
      const o = parseRow(l, 0, line, this.file);
      out.push({ line, lines: o === undefined ? [l] : this.conv.row(o, line).map((e) => stringifyJson(e)) });
      if (o === undefined) break;
    }
    return out;
  }
}

const strip = (l: string): string => (l.endsWith('\r') ? l.slice(0, -1) : l);

/** A snapshot placeholder standing where dsh wrote a real id (`{{messageId}}`, `{{message:3}}`). */
const PLACEHOLDER_ID = /^\{\{[^{}]*\}\}$/;

/** Literal text in `canonical`'s work stack (every other entry is a value still to write). */
class Lit {
  constructor(readonly s: string) {}
}

/**
 * Key order aside, so an inbox entry and the message it became compare equal. Iterative: a
 * message in a log has no depth limit, so neither may this.
 */
function canonical(v: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x instanceof Lit) out.push(x.s);
    else if (Array.isArray(x)) {
      stack.push(new Lit(']'));
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i], new Lit(i > 0 ? ',' : ''));
      stack.push(new Lit('['));
    } else if (isObj(x)) {
      const keys = Object.keys(x).sort();
      stack.push(new Lit('}'));
      for (let i = keys.length - 1; i >= 0; i--) stack.push(x[keys[i]!], new Lit(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`));
      stack.push(new Lit('{'));
    } else out.push(JSON.stringify(x) ?? 'null');
  }
  return out.join('');
}

/** The messages of a row: where each of the row's message objects sits. */
function messagesOf(o: Obj): Obj[] {
  const d = o.data;
  if (!isObj(d)) return [];
  switch (o.type) {
    case 'user/message':
      return [d];
    case 'assistant/message':
    case 'tool/result':
    case 'system/message':
      return isObj(d.message) ? [d.message] : [];
    case 'agent/inbox/spliced':
      return Array.isArray(d.inserted) ? d.inserted.filter(isObj) : [];
    default:
      return [];
  }
}

/**
 * dsh's snapshot normaliser may write one placeholder for the ids of different messages (the
 * python-sdk snapshots give every message `{{messageId}}`). dsh had distinct ids there, and the
 * inbox and replay rely on that: two different messages pending at once under one id are refused
 * (DUPLICATE_MESSAGE_ID). So a placeholder id used by messages of different content gets a
 * suffix per distinct message (`{{messageId}}#2`, …); the same message (an inbox entry and the
 * user/message it became) keeps one id. Real (non-placeholder) ids are never touched.
 */
class PlaceholderIds {
  private readonly seen = new Map<string, Map<string, string>>();
  /** How many message objects were given a new id. */
  renamed = 0;

  distinct(o: Obj): void {
    for (const m of messagesOf(o)) {
      const id = m.id;
      if (typeof id !== 'string' || !PLACEHOLDER_ID.test(id)) continue;
      const { id: _id, ...body } = m;
      const key = canonical(body);
      let byBody = this.seen.get(id);
      if (!byBody) this.seen.set(id, (byBody = new Map()));
      let given = byBody.get(key);
      if (given === undefined) {
        given = byBody.size === 0 ? id : `${id}#${byBody.size + 1}`;
        byBody.set(key, given);
      }
      if (given !== id) {
        m.id = given;
        this.renamed++;
      }
    }
  }
}

/** V3's PTC renames, undone (format 0 calls them code dispatches). */
const RENAMED: Record<string, string> = {
  'tool/ptc-dispatch-start': 'tool/code-dispatch-start',
  'tool/ptc-dispatch': 'tool/code-dispatch',
};

function textOf(m: Obj): string | undefined {
  if (!Array.isArray(m.content)) return undefined;
  let s = '';
  for (const b of m.content) if (isObj(b) && b.type === 'text' && typeof b.text === 'string') s += b.text;
  return s;
}

function surfaceOp(op: unknown, map: (s: unknown) => unknown): unknown {
  if (!isObj(op) || op.op !== 'replace') return op;
  const start = 'startSeq' in op ? op.startSeq : op.start;
  const end = 'endSeq' in op ? op.endSeq : op.end;
  return { op: 'replace', start: map(start), end: map(end) };
}

/** An event's data in format 0's shape, with its seq references mapped. */
function eventData(type: string, d: Obj, map: (s: unknown) => unknown, mapArr: (a: unknown) => unknown): Obj {
  let out: Obj = d;
  const set = (k: string, v: unknown): void => {
    if (out === d) out = { ...d };
    out[k] = v;
  };
  switch (type) {
    case 'user/message':
      return message(d) as Obj;
    case 'assistant/message': {
      const { stream: _s, ...rest } = d;
      out = rest;
      if ('message' in rest) out.message = message(rest.message);
      return out;
    }
    case 'tool/result':
    case 'system/message':
      if ('message' in d) set('message', message(d.message));
      return out;
    default:
      break;
  }
  if (Array.isArray(d.messageSeqs)) set('messageSeqs', mapArr(d.messageSeqs));
  if (Array.isArray(d.shadowedSeqs)) set('shadowedSeqs', mapArr(d.shadowedSeqs));
  if (Array.isArray(d.shadowedRange)) set('shadowedRange', mapArr(d.shadowedRange));
  else if (isObj(d.shadowedRange)) set('shadowedRange', Object.fromEntries(Object.entries(d.shadowedRange).map(([k, v]) => [k, map(v)])));
  if (typeof d.throughSeq === 'number') set('throughSeq', map(d.throughSeq));
  if (typeof d.sourceEventSeq === 'number') set('sourceEventSeq', map(d.sourceEventSeq));
  return out;
}

/** The chunk events of an embedded stream, in order, with their times. */
function expandStream(stream: unknown[], turn: unknown, step: unknown, fallback: number): { time: number; data: Obj }[] {
  const out: { time: number; data: Obj }[] = [];
  let last = fallback;
  for (const item of stream) {
    if (!isObj(item)) continue;
    if (item.type === 'chunk') {
      const t = typeof item.time === 'number' ? item.time : last;
      last = t;
      out.push({ time: t, data: { turn, step, chunk: item.chunk } });
      continue;
    }
    const call = item.type === 'tool-call-chunks';
    const kind = call ? 'tool-call-delta' : item.type === 'reasoning-chunks' ? 'reasoning-delta' : 'text-delta';
    const payload = (call ? item.args : item.texts) as unknown[];
    if (!Array.isArray(payload)) continue;
    const dt = Array.isArray(item.dt) ? item.dt : [];
    let t = typeof item.time0 === 'number' ? item.time0 : last;
    payload.forEach((p, k) => {
      if (k > 0) t += typeof dt[k - 1] === 'number' ? (dt[k - 1] as number) : 0;
      const chunk: Obj = call
        ? 'name' in item
          ? { type: kind, index: item.index, id: item.id, name: item.name, argumentsDelta: p }
          : { type: kind, index: item.index, id: item.id, argumentsDelta: p }
        : { type: kind, index: item.index, text: p };
      out.push({ time: t, data: { turn, step, chunk } });
    });
    last = t;
  }
  return out;
}
