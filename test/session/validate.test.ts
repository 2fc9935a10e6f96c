/**
 * Event shapes: every known type refuses a malformed payload with
 * INVALID_EVENT (or LEGACY_VOCABULARY) naming the type, seq and JSON path; envelopes of stored
 * events are checked key by key.
 */
import { describe, expect, it } from 'vitest';
import { validateEnvelope, validateEventData } from '../../src/session/index.js';
import { assistantMsg, expectRefused, expectSessionError, newSession, openStep, rawAppend, toolResultMsg, userMsg } from './helpers.js';

const SURFACE = new Set(['user/message', 'assistant/message', 'tool/result']);

/** A session with turn 1 step 1 open and a recorded call `c1`, so only the shape can fail. */
function ready() {
  const s = newSession();
  openStep(s, 1);
  s.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'bash', arguments: '{}' });
  return s;
}

const header = (config: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  header: { config, ...rest },
  reason: 'initial',
});
const cfg = { provider: 'p', model: 'm' };
const tr = (message: unknown, extra: Record<string, unknown> = {}) => ({ turn: 1, step: 1, message, ...extra });
const am = (message: unknown, extra: Record<string, unknown> = {}) => ({ turn: 1, step: 1, message, ...extra });
const good = toolResultMsg('r1', 'c1');

// [case name, type, data, JSON path]
const cases: [string, string, unknown, string][] = [
  ['turn/start data null', 'turn/start', null, '$.data'],
  ['turn/start data an array', 'turn/start', [], '$.data'],
  ['turn/start without turn', 'turn/start', {}, '$.data.turn'],
  ['turn/start turn 0', 'turn/start', { turn: 0 }, '$.data.turn'],
  ['turn/start fractional turn', 'turn/start', { turn: 1.5 }, '$.data.turn'],
  ['turn/start turn as a string', 'turn/start', { turn: '1' }, '$.data.turn'],
  ['turn/end without reason', 'turn/end', { turn: 1 }, '$.data.reason'],
  ['turn/end reason without kind', 'turn/end', { turn: 1, reason: {} }, '$.data.reason.kind'],
  ['turn/end empty kind', 'turn/end', { turn: 1, reason: { kind: '' } }, '$.data.reason.kind'],
  ['turn/end aborted without cause', 'turn/end', { turn: 1, reason: { kind: 'aborted' } }, '$.data.reason.reason'],
  ['turn/end aborted cause without kind', 'turn/end', { turn: 1, reason: { kind: 'aborted', reason: {} } }, '$.data.reason.reason.kind'],
  ['turn/end error without failure', 'turn/end', { turn: 1, reason: { kind: 'error' } }, '$.data.reason.error'],
  [
    'turn/end error failure without code',
    'turn/end',
    { turn: 1, reason: { kind: 'error', error: { message: 'x' } } },
    '$.data.reason.error.code',
  ],
  [
    'turn/end error failure without message',
    'turn/end',
    { turn: 1, reason: { kind: 'error', error: { code: 'X' } } },
    '$.data.reason.error.message',
  ],
  ['step/start step 0', 'step/start', { turn: 1, step: 0 }, '$.data.step'],
  ['step/end without step', 'step/end', { turn: 1 }, '$.data.step'],
  ['step/start negative turn', 'step/start', { turn: -1, step: 1 }, '$.data.turn'],
  ['user/message without id', 'user/message', { ...userMsg('u'), id: undefined }, '$.data.id'],
  ['user/message empty id', 'user/message', { ...userMsg('u'), id: '' }, '$.data.id'],
  ['user/message role assistant', 'user/message', { ...userMsg('u'), role: 'assistant' }, '$.data.role'],
  ['user/message without source', 'user/message', { ...userMsg('u'), source: undefined }, '$.data.source'],
  ['user/message empty source kind', 'user/message', { ...userMsg('u'), source: { kind: '' } }, '$.data.source.kind'],
  ['user/message content not an array', 'user/message', { ...userMsg('u'), content: 'hi' }, '$.data.content'],
  ['user/message block not an object', 'user/message', { ...userMsg('u'), content: ['hi'] }, '$.data.content[0]'],
  ['user/message block without type', 'user/message', { ...userMsg('u'), content: [{ text: 'x' }] }, '$.data.content[0].type'],
  ['text block text not a string', 'user/message', { ...userMsg('u'), content: [{ type: 'text', text: 1 }] }, '$.data.content[0].text'],
  [
    'reasoning block without text',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'text', text: 'a' }, { type: 'reasoning' }] },
    '$.data.content[1].text',
  ],
  ['image block without attachment', 'user/message', { ...userMsg('u'), content: [{ type: 'image' }] }, '$.data.content[0].attachment'],
  [
    'tool-call block without id',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-call', name: 'n', arguments: '{}' }] },
    '$.data.content[0].id',
  ],
  [
    'tool-call block arguments not a string',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-call', id: 'c', name: 'n', arguments: {} }] },
    '$.data.content[0].arguments',
  ],
  [
    'tool-result block without toolCallId',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-result', content: [] }] },
    '$.data.content[0].toolCallId',
  ],
  [
    'tool-result block content not an array',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-result', toolCallId: 'c', content: 'x' }] },
    '$.data.content[0].content',
  ],
  [
    'tool-result block isError not a boolean',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-result', toolCallId: 'c', content: [], isError: 'yes' }] },
    '$.data.content[0].isError',
  ],
  [
    'a bad block nested in a tool-result block',
    'user/message',
    { ...userMsg('u'), content: [{ type: 'tool-result', toolCallId: 'c', content: [{ type: 'text' }] }] },
    '$.data.content[0].content[0].text',
  ],
  ['assistant/chunk without chunk', 'assistant/chunk', { turn: 1, step: 1 }, '$.data.chunk'],
  ['assistant/chunk chunk without type', 'assistant/chunk', { turn: 1, step: 1, chunk: { index: 0 } }, '$.data.chunk.type'],
  ['assistant/chunk without step', 'assistant/chunk', { turn: 1, chunk: { type: 'text-delta', index: 0, text: '' } }, '$.data.step'],
  ['assistant/message without message', 'assistant/message', { turn: 1, step: 1 }, '$.data.message'],
  ['assistant/message role user', 'assistant/message', am({ ...assistantMsg('a'), role: 'user' }), '$.data.message.role'],
  [
    'assistant/message source not model',
    'assistant/message',
    am({ ...assistantMsg('a'), source: { kind: 'user' } }),
    '$.data.message.source.kind',
  ],
  [
    'assistant/message empty provider',
    'assistant/message',
    am({ ...assistantMsg('a'), source: { kind: 'model', provider: '', model: 'm' } }),
    '$.data.message.source.provider',
  ],
  [
    'assistant/message without model',
    'assistant/message',
    am({ ...assistantMsg('a'), source: { kind: 'model', provider: 'p' } }),
    '$.data.message.source.model',
  ],
  [
    'assistant/message usage without inputTokens',
    'assistant/message',
    am(assistantMsg('a'), { usage: { outputTokens: 1 } }),
    '$.data.usage.inputTokens',
  ],
  [
    'assistant/message usage outputTokens a string',
    'assistant/message',
    am(assistantMsg('a'), { usage: { inputTokens: 1, outputTokens: '2' } }),
    '$.data.usage.outputTokens',
  ],
  [
    'assistant/message negative cache reads',
    'assistant/message',
    am(assistantMsg('a'), { usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: -1 } }),
    '$.data.usage.cacheReadTokens',
  ],
  ['assistant/message interrupted false', 'assistant/message', am(assistantMsg('a'), { interrupted: false }), '$.data.interrupted'],
  ['tool/call empty callId', 'tool/call', { turn: 1, step: 1, callId: '', name: 'n', arguments: '{}' }, '$.data.callId'],
  ['tool/call name not a string', 'tool/call', { turn: 1, step: 1, callId: 'c', name: 3, arguments: '{}' }, '$.data.name'],
  ['tool/call parsed arguments', 'tool/call', { turn: 1, step: 1, callId: 'c', name: 'n', arguments: { a: 1 } }, '$.data.arguments'],
  ['tool/result source not tool', 'tool/result', tr({ ...good, source: { kind: 'user' } }), '$.data.message.source.kind'],
  ['tool/result without source callId', 'tool/result', tr({ ...good, source: { kind: 'tool' } }), '$.data.message.source.callId'],
  ['tool/result role assistant', 'tool/result', tr({ ...good, role: 'assistant' }), '$.data.message.role'],
  ['tool/result two blocks', 'tool/result', tr({ ...good, content: [good.content[0], good.content[0]] }), '$.data.message.content'],
  ['tool/result a text block', 'tool/result', tr({ ...good, content: [{ type: 'text', text: 'x' }] }), '$.data.message.content'],
  ['tool/result no blocks', 'tool/result', tr({ ...good, content: [] }), '$.data.message.content'],
  [
    'tool/result toolCallId differs from source.callId',
    'tool/result',
    tr({ ...good, content: [{ ...good.content[0], toolCallId: 'c2' }] }),
    '$.data.message.content[0].toolCallId',
  ],
  ['tool/result error without code', 'tool/result', tr(good, { error: { name: 'E', code: '' } }), '$.data.error.code'],
  ['tool/result error name not a string', 'tool/result', tr(good, { error: { code: 'X' } }), '$.data.error.name'],
  ['todo/write todos not an array', 'todo/write', { todos: {} }, '$.data.todos'],
  [
    'todo/write unknown status',
    'todo/write',
    {
      todos: [
        { content: 'a', status: 'pending' },
        { content: 'b', status: 'done' },
      ],
    },
    '$.data.todos[1].status',
  ],
  ['todo/write content not a string', 'todo/write', { todos: [{ content: 1, status: 'pending' }] }, '$.data.todos[0].content'],
  ['request/header unknown reason', 'request/header', { header: { config: cfg }, reason: 'restart' }, '$.data.reason'],
  ['request/header without header', 'request/header', { reason: 'initial' }, '$.data.header'],
  ['request/header without config', 'request/header', { header: {}, reason: 'initial' }, '$.data.header.config'],
  ['request/header empty provider', 'request/header', header({ provider: '', model: 'm' }), '$.data.header.config'],
  ['request/header without model', 'request/header', header({ provider: 'p' }), '$.data.header.config'],
  [
    'request/header empty reasoningEffort',
    'request/header',
    header({ ...cfg, reasoningEffort: '' }),
    '$.data.header.config.reasoningEffort',
  ],
  ['request/header temperature a string', 'request/header', header({ ...cfg, temperature: 'hot' }), '$.data.header.config.temperature'],
  ['request/header maxTokens a string', 'request/header', header({ ...cfg, maxTokens: '10' }), '$.data.header.config.maxTokens'],
  ['request/header stop not an array', 'request/header', header({ ...cfg, stop: 'x' }), '$.data.header.config.stop'],
  ['request/header stop of numbers', 'request/header', header({ ...cfg, stop: ['a', 1] }), '$.data.header.config.stop[1]'],
  [
    'request/header adapter-default marker not true',
    'request/header',
    header({ ...cfg, maxTokens: 10 }, { adapterDefaults: { maxTokens: false } }),
    '$.data.header.adapterDefaults.maxTokens',
  ],
  [
    'request/header adapter default for an absent field',
    'request/header',
    header(cfg, { adapterDefaults: { reasoningEffort: true } }),
    '$.data.header.adapterDefaults.reasoningEffort',
  ],
  ['request/header system not a string', 'request/header', header(cfg, { system: 42 }), '$.data.header.system'],
  ['request/header tools not an array', 'request/header', header(cfg, { tools: {} }), '$.data.header.tools'],
  [
    'request/header tool without a name',
    'request/header',
    header(cfg, { tools: [{ name: '', description: '', parameters: {} }] }),
    '$.data.header.tools[0].name',
  ],
  [
    'request/header placeholder tools (live appends allow none)',
    'request/header',
    header(cfg, { tools: '{{tools}}' }),
    '$.data.header.tools',
  ],
  ['request/context empty provider', 'request/context', { provider: '', model: 'm' }, '$.data.provider'],
  ['request/context without model', 'request/context', { provider: 'p' }, '$.data.model'],
  ['request/context negative window', 'request/context', { provider: 'p', model: 'm', contextWindow: -1 }, '$.data.contextWindow'],
  ['session/end-seed data not an object', 'session/end-seed', 'x', '$.data'],
];

describe('append refuses malformed payloads of known types', () => {
  it('an assistant/chunk whose chunk type is empty', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(
      s,
      () => rawAppend(s, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: '', index: 0, text: 'x' } }),
      'INVALID_EVENT',
    );
    expect(err.details.path).toBe('$.data.chunk.type');
  });
  for (const [name, type, data, path] of cases) {
    it(name, () => {
      const s = ready();
      const opts = SURFACE.has(type) ? { surfaceOp: 'append' } : undefined;
      // JSON round trip drops the `undefined` fields the spreads above used to delete keys.
      const payload = data === null || typeof data !== 'object' ? data : JSON.parse(JSON.stringify(data));
      const err = expectRefused(s, () => rawAppend(s, type, payload, opts), 'INVALID_EVENT');
      expect(err.details).toMatchObject({ eventType: type, seq: 3, path, rule: 'event-shape' });
      expect(err.message).toContain(`event "${type}" at seq 3 is invalid at ${path}`);
    });
  }
});

describe('well-formed payloads of every core type are accepted', () => {
  it('a session using every core type', () => {
    const s = ready();
    s.append('request/header', {
      header: {
        config: { ...cfg, reasoningEffort: 'high', maxTokens: 100, temperature: 0.5, stop: ['x'] },
        adapterDefaults: { maxTokens: true },
        system: 'sys',
        tools: [{ name: 't', description: 'd', parameters: {} }],
      },
      reason: 'initial',
    });
    s.append('request/context', { provider: 'p', model: 'm', contextWindow: 128000 });
    s.append('todo/write', { todos: [{ content: 'a', status: 'in_progress' }] });
    s.append(
      'user/message',
      {
        id: 'u',
        role: 'user',
        content: [{ type: 'image', attachment: { attachmentId: 'x', mediaType: 'image/png' } }],
        source: { kind: 'plugin', plugin: 'p', form: 'notice', summary: 's' },
      },
      { surfaceOp: 'append' },
    );
    s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } });
    s.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: assistantMsg('a', [{ type: 'reasoning', text: 'hm' }]),
        usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 0, reasoningTokens: 1 },
        interrupted: true,
      },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    s.append('tool/result', tr(good, { error: { name: 'E', code: 'X' }, meta: { any: [1] } }) as never, {
      surfaceOp: 'append',
      sourceEventSeqs: [2],
    });
    s.append('step/end', { turn: 1, step: 1 });
    s.append('turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'm', code: 'SERVER', status: 500 } } });
    for (const reason of [
      { kind: 'aborted', reason: { kind: 'hook', reason: 'r' } },
      { kind: 'blocked' },
      { kind: 'max-tokens' },
      { kind: 'interrupted' },
      { kind: 'my-plugin-kind' },
    ]) {
      const t = s.trace.lastTurn + 1;
      s.append('turn/start', { turn: t });
      s.append('turn/end', { turn: t, reason: reason as never });
    }
    expect(s.length).toBe(22);
  });
  it('unknown content block types pass (ContentBlockMap is merge-extensible)', () => {
    const s = ready();
    s.append('user/message', { ...userMsg('u'), content: [{ type: 'audio', clip: 'x' } as never] }, { surfaceOp: 'append' });
    expect(s.length).toBe(4);
  });
});

describe('validateEventData', () => {
  it('reports placeholders to onPlaceholder instead of failing', () => {
    const seen: unknown[] = [];
    validateEventData(
      'request/header',
      7,
      { header: { config: cfg, system: '{{system}}', tools: '{{tools}}' }, reason: 'initial' },
      { onPlaceholder: (w) => seen.push(w) },
    );
    expect(seen).toEqual([
      { seq: 7, eventType: 'request/header', path: '$.data.header.system', token: '{{system}}' },
      { seq: 7, eventType: 'request/header', path: '$.data.header.tools', token: '{{tools}}' },
    ]);
  });
  it('plugin types are not shape-checked', () => {
    expect(() => validateEventData('hook/result', 0, { anything: 1 })).not.toThrow();
  });
  it('a tool-result block nested 100,000 levels deep is checked without a stack overflow', () => {
    let block: unknown = { type: 'text', text: 'leaf' };
    for (let i = 0; i < 100_000; i++) block = { type: 'tool-result', toolCallId: 'c', content: [block] };
    expect(() => validateEventData('user/message', 0, { ...userMsg('u'), content: [block] })).not.toThrow();
    let bad: unknown = { type: 'text', text: 3 };
    for (let i = 0; i < 100_000; i++) bad = { type: 'tool-result', toolCallId: 'c', content: [bad] };
    const err = expectSessionError(() => validateEventData('user/message', 0, { ...userMsg('u'), content: [bad] }), 'INVALID_EVENT');
    expect(err.details.path).toBe(`$.data.content[0]${'.content[0]'.repeat(100_000)}.text`);
  });
});

describe('validateEnvelope (stored events)', () => {
  const ok = { type: 'turn/start', seq: 3, time: 5, data: { turn: 1 } };
  const bad: [string, unknown, string, 'INVALID_EVENT' | 'SEQ_GAP'][] = [
    ['not an object', 'x', '$', 'INVALID_EVENT'],
    ['null', null, '$', 'INVALID_EVENT'],
    ['an array', [ok], '$', 'INVALID_EVENT'],
    ['an unknown key', { ...ok, extra: 1 }, '$.extra', 'INVALID_EVENT'],
    ['no type', { ...ok, type: undefined }, '$.type', 'INVALID_EVENT'],
    ['empty type', { ...ok, type: '' }, '$.type', 'INVALID_EVENT'],
    ['seq not an integer', { ...ok, seq: 3.5 }, '$.seq', 'INVALID_EVENT'],
    ['seq a string', { ...ok, seq: '3' }, '$.seq', 'INVALID_EVENT'],
    ['seq out of place', { ...ok, seq: 4 }, '$.seq', 'SEQ_GAP'],
    ['fractional time', { ...ok, time: 1.5 }, '$.time', 'INVALID_EVENT'],
    ['time a string', { ...ok, time: '5' }, '$.time', 'INVALID_EVENT'],
    ['no data', { type: 'turn/start', seq: 3, time: 5 }, '$.data', 'INVALID_EVENT'],
    ['ignorable false', { ...ok, ignorable: false }, '$.ignorable', 'INVALID_EVENT'],
  ];
  for (const [name, e, path, code] of bad) {
    it(name, () => {
      const input =
        typeof e === 'object' && e !== null && !Array.isArray(e)
          ? Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined))
          : e;
      const err = expectSessionError(() => validateEnvelope(input, 3), code);
      expect(err.details).toMatchObject({ seq: 3, path, rule: code === 'SEQ_GAP' ? 'seq-contiguity' : 'envelope' });
      expect(err.message).toContain('index 3');
    });
  }
  it('accepts a full surface envelope', () => {
    expect(() =>
      validateEnvelope({ ...ok, type: 'user/message', surfaceOp: 'append', sourceEventSeqs: [0], ignorable: true }, 3),
    ).not.toThrow();
  });
});
