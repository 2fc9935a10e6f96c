/**
 * Structural validation of event payloads and envelopes. Types guarantee shapes for TypeScript
 * callers; this guards everything else (JavaScript callers, plugins, files from disk) with a
 * precise error naming the event type, seq and JSON path.
 */
import { SessionError } from './errors.js';
import { shortPath } from './json.js';

export interface ValidationOptions {
  /**
   * Called for a `{{token}}` placeholder where a real value belongs (tokenised test fixtures).
   * When absent, a placeholder is an error like any other wrong value.
   */
  onPlaceholder?: (where: { seq: number; eventType: string; path: string; token: string }) => void;
}

export const PLACEHOLDER = /^\{\{[A-Za-z_][\w.-]*\}\}$/;

type Obj = Record<string, unknown>;

class Checker {
  constructor(
    readonly type: string,
    readonly seq: number,
    readonly opts: ValidationOptions,
  ) {}

  fail(path: string, why: string, code: 'INVALID_EVENT' | 'LEGACY_VOCABULARY' = 'INVALID_EVENT'): never {
    throw new SessionError(code, `event "${shortPath(this.type, 80)}" at seq ${this.seq} is invalid at ${shortPath(path)}: ${why}`, {
      eventType: this.type,
      seq: this.seq,
      path,
      rule: code === 'LEGACY_VOCABULARY' ? 'legacy-vocabulary' : 'event-shape',
    });
  }

  obj(v: unknown, path: string): Obj {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(path, `expected an object, got ${describe(v)}`);
    return v as Obj;
  }
  arr(v: unknown, path: string): unknown[] {
    if (!Array.isArray(v)) this.fail(path, `expected an array, got ${describe(v)}`);
    return v;
  }
  str(v: unknown, path: string, nonEmpty = false): string {
    if (typeof v !== 'string') this.fail(path, `expected a string, got ${describe(v)}`);
    if (nonEmpty && v.length === 0) this.fail(path, 'expected a non-empty string');
    return v;
  }
  optStr(o: Obj, k: string, path: string, nonEmpty = false): void {
    if (o[k] !== undefined) this.str(o[k], `${path}.${k}`, nonEmpty);
  }
  int(v: unknown, path: string, min = 0): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) this.fail(path, `expected an integer ≥ ${min}, got ${describe(v)}`);
    return v;
  }
  count(o: Obj, k: string, path: string): void {
    const v = o[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
      this.fail(`${path}.${k}`, `expected a non-negative number, got ${describe(v)}`);
  }
  placeholder(v: unknown, path: string): boolean {
    if (typeof v === 'string' && PLACEHOLDER.test(v) && this.opts.onPlaceholder) {
      this.opts.onPlaceholder({ seq: this.seq, eventType: this.type, path, token: v });
      return true;
    }
    return false;
  }

  turnStep(d: Obj, withStep: boolean): void {
    this.int(d.turn, '$.data.turn', 1);
    if (withStep) this.int(d.step, '$.data.step', 1);
  }

  /**
   * Content blocks, iteratively: a tool-result block holds blocks of its own, and a hostile or
   * machine-built message may nest them arbitrarily deep.
   */
  blocks(v: unknown, path: string): void {
    const stack: { a: unknown[]; i: number; path: string }[] = [{ a: this.arr(v, path), i: 0, path }];
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!;
      if (f.i >= f.a.length) {
        stack.pop();
        continue;
      }
      const i = f.i++;
      const p = `${f.path}[${i}]`;
      const inner = this.block(f.a[i], p);
      if (inner !== undefined) stack.push({ a: inner, i: 0, path: `${p}.content` });
    }
  }

  /** Check one block; returns the nested blocks of a tool-result block for the caller to walk. */
  block(v: unknown, path: string): unknown[] | undefined {
    const b = this.obj(v, path);
    const t = this.str(b.type, `${path}.type`, true);
    switch (t) {
      case 'text':
      case 'reasoning':
        this.str(b.text, `${path}.text`);
        return undefined;
      case 'image':
        this.obj(b.attachment, `${path}.attachment`);
        return undefined;
      case 'tool-call':
        this.str(b.id, `${path}.id`, true);
        this.str(b.name, `${path}.name`);
        this.str(b.arguments, `${path}.arguments`);
        return undefined;
      case 'tool-result': {
        this.str(b.toolCallId, `${path}.toolCallId`, true);
        const inner = this.arr(b.content, `${path}.content`);
        if (b.isError !== undefined && typeof b.isError !== 'boolean')
          this.fail(`${path}.isError`, `expected a boolean, got ${describe(b.isError)}`);
        return inner;
      }
      default:
        return undefined; // ContentBlockMap is merge-extensible
    }
  }

  message(v: unknown, path: string, role: 'user' | 'assistant'): Obj {
    const m = this.obj(v, path);
    this.str(m.id, `${path}.id`, true);
    if (m.role !== role) this.fail(`${path}.role`, `expected "${role}", got ${describe(m.role)}`);
    const src = this.obj(m.source, `${path}.source`);
    this.str(src.kind, `${path}.source.kind`, true);
    this.blocks(m.content, `${path}.content`);
    return m;
  }

  usage(v: unknown, path: string): void {
    const u = this.obj(v, path);
    for (const k of ['inputTokens', 'outputTokens']) {
      if (typeof u[k] !== 'number') this.fail(`${path}.${k}`, `expected a number, got ${describe(u[k])}`);
    }
    for (const k of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens']) this.count(u, k, path);
  }

  /**
   * One stream chunk, as the adapters' stream grammar defines it: a chunk the loop could not have
   * written is refused here, at append and at load alike, instead of breaking a replay later.
   */
  chunk(v: unknown, path: string): void {
    const ch = this.obj(v, path);
    const t = this.str(ch.type, `${path}.type`, true);
    const index = (): void => void this.int(ch.index, `${path}.index`);
    switch (t) {
      case 'block-start':
        index();
        if (!BLOCK_TYPES.has(ch.blockType as string))
          this.fail(`${path}.blockType`, `expected text, reasoning or tool-call, got ${describe(ch.blockType)}`);
        return;
      case 'text-delta':
      case 'reasoning-delta':
        index();
        this.str(ch.text, `${path}.text`);
        return;
      case 'tool-call-delta':
        index();
        this.str(ch.id, `${path}.id`, true);
        this.optStr(ch, 'name', path);
        this.str(ch.argumentsDelta, `${path}.argumentsDelta`);
        return;
      case 'block-end': {
        index();
        const inner = this.block(ch.block, `${path}.block`);
        if (inner !== undefined) this.blocks(inner, `${path}.block.content`);
        return;
      }
      case 'usage':
        this.usage(ch.usage, `${path}.usage`);
        return;
      case 'finish': {
        const r = this.obj(ch.reason, `${path}.reason`);
        const kind = this.str(r.kind, `${path}.reason.kind`, true);
        if (!FINISH_KINDS.has(kind))
          this.fail(`${path}.reason.kind`, `expected stop, tool-calls, max-tokens, aborted or error, got ${describe(kind)}`);
        if (kind === 'aborted' || kind === 'error') this.failure(r.failure, `${path}.reason.failure`);
        if (ch.replayState !== undefined) this.obj(ch.replayState, `${path}.replayState`);
        return;
      }
      default:
        this.fail(
          `${path}.type`,
          `unknown stream chunk type ${describe(t)} (expected block-start, text-delta, reasoning-delta, tool-call-delta, ` +
            'block-end, usage or finish)',
        );
    }
  }

  failure(v: unknown, path: string): void {
    const f = this.obj(v, path);
    this.str(f.message, `${path}.message`);
    this.str(f.code, `${path}.code`, true);
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length > 40 ? `${JSON.stringify(v.slice(0, 40))}…` : JSON.stringify(v);
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

const TODO_STATUS = new Set(['pending', 'in_progress', 'completed']);
const BLOCK_TYPES: ReadonlySet<string> = new Set(['text', 'reasoning', 'tool-call']);
const FINISH_KINDS: ReadonlySet<string> = new Set(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error']);
const HEADER_REASONS = new Set(['initial', 'resume', 'change']);

const NO_OPTIONS: ValidationOptions = Object.freeze({});

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/**
 * The hot types, checked without allocating: true means valid. False means "not sure": the full
 * check below decides, and produces the precise error.
 */
function plainlyValid(type: string, data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Obj;
  switch (type) {
    case 'assistant/chunk': {
      // The delta chunks (nearly every chunk of a log) are checked here in full; others below.
      const c = d.chunk as Obj | null | undefined;
      if (!isCount(d.turn) || !isCount(d.step) || typeof c !== 'object' || c === null) return false;
      const index = c.index;
      if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return false;
      switch (c.type) {
        case 'text-delta':
        case 'reasoning-delta':
          return typeof c.text === 'string';
        case 'tool-call-delta':
          return (
            typeof c.id === 'string' &&
            c.id !== '' &&
            typeof c.argumentsDelta === 'string' &&
            (c.name === undefined || typeof c.name === 'string')
          );
        default:
          return false;
      }
    }
    case 'step/start':
    case 'step/end':
      return isCount(d.turn) && isCount(d.step);
    case 'tool/call':
      return (
        isCount(d.turn) &&
        isCount(d.step) &&
        typeof d.callId === 'string' &&
        d.callId !== '' &&
        typeof d.name === 'string' &&
        typeof d.arguments === 'string'
      );
    default:
      return false;
  }
}

/** Validate the payload of a known event type. Unknown (plugin) types are only required to be JSON. */
export function validateEventData(type: string, seq: number, data: unknown, opts: ValidationOptions = NO_OPTIONS): void {
  if (plainlyValid(type, data)) return;
  const c = new Checker(type, seq, opts);
  switch (type) {
    case 'turn/start': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, false);
      // Old logs carried a turn trigger; the loader strips it, so a live one would not survive a reload.
      if ('trigger' in d)
        c.fail(
          '$.data.trigger',
          'turn/start has no trigger in dsh v0 (legacy vocabulary; what entered the turn is its user/message batch)',
          'LEGACY_VOCABULARY',
        );
      return;
    }
    case 'turn/end': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, false);
      const r = c.obj(d.reason, '$.data.reason');
      const kind = c.str(r.kind, '$.data.reason.kind', true);
      if (kind === 'aborted') c.str(c.obj(r.reason, '$.data.reason.reason').kind, '$.data.reason.reason.kind', true);
      if (kind === 'error') c.failure(r.error, '$.data.reason.error');
      return;
    }
    case 'step/start':
    case 'step/end':
      c.turnStep(c.obj(data, '$.data'), true);
      return;
    case 'user/message':
      c.message(data, '$.data', 'user');
      return;
    case 'assistant/chunk': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, true);
      c.chunk(d.chunk, '$.data.chunk');
      return;
    }
    case 'assistant/message': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, true);
      const m = c.message(d.message, '$.data.message', 'assistant');
      const src = m.source as Obj;
      if (src.kind !== 'model')
        c.fail('$.data.message.source.kind', `an assistant message must come from a model, got ${describe(src.kind)}`);
      c.str(src.provider, '$.data.message.source.provider', true);
      c.str(src.model, '$.data.message.source.model', true);
      if (d.usage !== undefined) c.usage(d.usage, '$.data.usage');
      if (d.interrupted !== undefined && d.interrupted !== true) c.fail('$.data.interrupted', 'must be true when present');
      return;
    }
    case 'tool/call': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, true);
      c.str(d.callId, '$.data.callId', true);
      c.str(d.name, '$.data.name');
      c.str(d.arguments, '$.data.arguments');
      return;
    }
    case 'tool/result': {
      const d = c.obj(data, '$.data');
      c.turnStep(d, true);
      const m = c.message(d.message, '$.data.message', 'user');
      const src = m.source as Obj;
      if (src.kind !== 'tool')
        c.fail('$.data.message.source.kind', `a tool result must have source kind "tool", got ${describe(src.kind)}`);
      const callId = c.str(src.callId, '$.data.message.source.callId', true);
      const content = m.content as Obj[];
      if (content.length !== 1 || content[0]?.type !== 'tool-result') {
        c.fail('$.data.message.content', 'a tool result message holds exactly one tool-result block');
      }
      if (content[0]!.toolCallId !== callId) {
        c.fail('$.data.message.content[0].toolCallId', `must equal source.callId "${callId}", got ${describe(content[0]!.toolCallId)}`);
      }
      if (d.error !== undefined) {
        const e = c.obj(d.error, '$.data.error');
        c.str(e.name, '$.data.error.name');
        c.str(e.code, '$.data.error.code', true);
      }
      return;
    }
    case 'todo/write': {
      const d = c.obj(data, '$.data');
      const todos = c.arr(d.todos, '$.data.todos');
      todos.forEach((t, i) => {
        const o = c.obj(t, `$.data.todos[${i}]`);
        c.str(o.content, `$.data.todos[${i}].content`);
        if (!TODO_STATUS.has(o.status as string))
          c.fail(`$.data.todos[${i}].status`, `expected pending, in_progress or completed, got ${describe(o.status)}`);
      });
      return;
    }
    case 'request/header': {
      const d = c.obj(data, '$.data');
      if (d.reason === 'fallback')
        c.fail('$.data.reason', 'reason "fallback" is legacy vocabulary that dsh v0 refuses', 'LEGACY_VOCABULARY');
      if (!HEADER_REASONS.has(d.reason as string)) c.fail('$.data.reason', `expected initial, resume or change, got ${describe(d.reason)}`);
      const h = c.obj(d.header, '$.data.header');
      const cfg = c.obj(h.config, '$.data.header.config');
      if (typeof cfg.provider !== 'string' || cfg.provider === '' || typeof cfg.model !== 'string' || cfg.model === '') {
        c.fail('$.data.header.config', 'a request header must name a non-empty provider and model');
      }
      c.optStr(cfg, 'reasoningEffort', '$.data.header.config', true);
      for (const k of ['temperature', 'maxTokens']) {
        if (cfg[k] !== undefined && (typeof cfg[k] !== 'number' || !Number.isFinite(cfg[k])))
          c.fail(`$.data.header.config.${k}`, `expected a number, got ${describe(cfg[k])}`);
      }
      if (cfg.stop !== undefined)
        c.arr(cfg.stop, '$.data.header.config.stop').forEach((s, i) => c.str(s, `$.data.header.config.stop[${i}]`));
      if (h.adapterDefaults !== undefined) {
        const ad = c.obj(h.adapterDefaults, '$.data.header.adapterDefaults');
        for (const [k, v] of Object.entries(ad)) {
          if (v !== true) c.fail(`$.data.header.adapterDefaults.${k}`, 'an adapter-default marker must be true');
          if (cfg[k] === undefined)
            c.fail(`$.data.header.adapterDefaults.${k}`, `marks config.${k} as an adapter default, but config has no ${k}`);
        }
      }
      if (h.system !== undefined && !c.placeholder(h.system, '$.data.header.system')) c.str(h.system, '$.data.header.system');
      if (h.tools !== undefined && !c.placeholder(h.tools, '$.data.header.tools')) {
        c.arr(h.tools, '$.data.header.tools').forEach((t, i) => {
          // Some dsh writers recorded only the tool names (dsh restores those as they are).
          if (typeof t === 'string') return void c.str(t, `$.data.header.tools[${i}]`, true);
          const o = c.obj(t, `$.data.header.tools[${i}]`);
          c.str(o.name, `$.data.header.tools[${i}].name`, true);
        });
      }
      return;
    }
    case 'request/context': {
      const d = c.obj(data, '$.data');
      c.str(d.provider, '$.data.provider', true);
      c.str(d.model, '$.data.model', true);
      c.count(d, 'contextWindow', '$.data');
      return;
    }
    case 'session/end-seed':
      c.obj(data, '$.data');
      return;
    case 'worker/cancel':
      c.int(c.obj(data, '$.data').inputId, '$.data.inputId');
      return;
    case 'steering/message':
      c.fail(
        '$.type',
        'steering/message is legacy vocabulary (old logs are read as user/message); append a user/message instead',
        'LEGACY_VOCABULARY',
      );
      return;
    case 'request/header-delta':
      c.fail(
        '$.type',
        'request/header-delta is legacy vocabulary that dsh v0 refuses; logs carry full request/header snapshots',
        'LEGACY_VOCABULARY',
      );
      return;
    default:
      return;
  }
}

const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs']);

/** Validate a stored event's envelope (the seed path); `index` is its position in the log. */
export function validateEnvelope(e: unknown, index: number): void {
  const fail = (path: string, why: string, code: 'INVALID_EVENT' | 'SEQ_GAP' = 'INVALID_EVENT', type?: string): never => {
    const details: { seq: number; path: string; rule: string; eventType?: string } = {
      seq: index,
      path,
      rule: code === 'SEQ_GAP' ? 'seq-contiguity' : 'envelope',
    };
    if (type !== undefined) details.eventType = type;
    throw new SessionError(code, `event at index ${index} has an invalid envelope at ${path}: ${why}`, details);
  };
  if (typeof e !== 'object' || e === null || Array.isArray(e)) fail('$', `expected an event object, got ${describe(e)}`);
  const o = e as Obj;
  for (const k in o) {
    if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
    if (!ENVELOPE_KEYS.has(k)) fail(`$.${k}`, `"${k}" is not an envelope field (allowed: ${[...ENVELOPE_KEYS].join(', ')})`);
  }
  if (typeof o.type !== 'string' || o.type === '') fail('$.type', `expected a non-empty string, got ${describe(o.type)}`);
  if (RESERVED_TYPES.has(o.type as string)) throw reservedType(o.type as string, index);
  const type = o.type as string;
  if (typeof o.seq !== 'number' || !Number.isSafeInteger(o.seq))
    fail('$.seq', `expected an integer, got ${describe(o.seq)}`, 'INVALID_EVENT', type);
  if (o.seq !== index) fail('$.seq', `seq ${o.seq as number} where ${index} belongs (seqs are contiguous from 0)`, 'SEQ_GAP', type);
  if (typeof o.time !== 'number' || !Number.isSafeInteger(o.time))
    fail('$.time', `expected integer epoch ms, got ${describe(o.time)}`, 'INVALID_EVENT', type);
  if (!('data' in o) || o.data === undefined) fail('$.data', 'data is missing', 'INVALID_EVENT', type);
  if (o.ignorable !== undefined && o.ignorable !== true) fail('$.ignorable', 'ignorable must be true when present', 'INVALID_EVENT', type);
}

/**
 * Names the JSONL format gives its own lines: the header tag and the packed-row tags. An event
 * with one of them would be read back as a header or a (malformed) row, losing the event or
 * the whole log; dsh keeps them apart by convention (event types have a slash), this refuses it.
 */
export const RESERVED_TYPES: ReadonlySet<string> = new Set(['session', 'text-chunks', 'reasoning-chunks', 'tool-call-chunks']);

export function reservedType(type: string, seq: number): SessionError {
  return new SessionError(
    'INVALID_EVENT',
    `event type "${type}" at seq ${seq} is reserved: the JSONL format uses it for ` +
      `${type === 'session' ? 'the header line' : 'packed chunk rows'}, so the event could not be read back; event types take a ` +
      `namespace, e.g. "myplugin/${type}"`,
    { eventType: type, seq, rule: 'reserved-type' },
  );
}
