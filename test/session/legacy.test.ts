/**
 * Read-time upgrades of older v0 logs, rule by rule, as dsh 0.1.0-rc.8 applies them when it
 * loads a log (issue 11 item 1): each old shape is upgraded exactly when it is whole, a malformed
 * old shape is refused naming its line, a current-looking event is left to validation, and
 * events outside any turn load with a warning.
 */
import { describe, expect, it } from 'vitest';
import { loadJsonl, type SessionError } from '../../src/session/index.js';
import { T0, expectSessionError } from './helpers.js';

const HEADER = { type: 'session', version: 0, id: 's1', createdAt: 1, cwd: '/work', delegationDepth: 0 };
const j = (v: unknown) => JSON.stringify(v);
const ev = (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) => ({
  type,
  seq,
  time: T0 + seq,
  data,
  ...extra,
});
const text = (events: unknown[]) => [j(HEADER), ...events.map(j)].join('\n') + '\n';
const model = { kind: 'model', provider: 'p', model: 'm' };

/** A turn around `body` (seqs from 2), closed: turn/start 0, step/start 1, …, step/end, turn/end. */
function turn(body: (seq: number) => unknown[], end: unknown = { kind: 'completed' }, start: unknown = { turn: 1 }): unknown[] {
  const inner = body(2);
  const n = 2 + inner.length;
  return [
    ev('turn/start', 0, start),
    ev('step/start', 1, { turn: 1, step: 1 }),
    ...inner,
    ev('step/end', n, { turn: 1, step: 1 }),
    ev('turn/end', n + 1, { turn: 1, reason: end }),
  ];
}
const load = (events: unknown[]) => loadJsonl(text(events), { file: 'old.jsonl' });
const refused = (events: unknown[]): SessionError => expectSessionError(() => load(events), 'INVALID_EVENT');

describe('message upgrades', () => {
  it('a user/message with content and source but no id or role gets both (id last, as dsh writes it)', () => {
    const l = load(
      turn((s) => [
        ev('user/message', s, { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user', rpcId: 'r' } }, { surfaceOp: 'append' }),
      ]),
    );
    const data = l.session.at(2)!.data;
    expect(data).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user', rpcId: 'r' },
      id: 'legacy-message:s1:2',
      role: 'user',
    });
    expect(Object.keys(data as object)).toEqual(['content', 'source', 'id', 'role']);
    expect(l.warnings.filter((w) => w.code === 'LEGACY_IMPORT').map((w) => [w.seq, w.line])).toEqual([[2, 4]]);
  });

  it('a user/message with a role but no id is not an old shape: refused as dsh refuses it', () => {
    const e = refused(
      turn((s) => [ev('user/message', s, { role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'append' })]),
    );
    expect(e.details).toMatchObject({ seq: 2, line: 4, path: '$.data.id' });
  });

  it('the older assistant/message layout (content, provenance) is wrapped into a model message', () => {
    const l = load(
      turn((s) => [
        ev(
          'assistant/message',
          s,
          {
            turn: 1,
            step: 1,
            content: [{ type: 'text', text: 'ok' }],
            provenance: { provider: 'p', model: 'm' },
            usage: { inputTokens: 1, outputTokens: 1 },
          },
          { surfaceOp: 'append', sourceEventSeqs: [] },
        ),
      ]),
    );
    expect(l.session.at(2)!.data).toEqual({
      turn: 1,
      step: 1,
      usage: { inputTokens: 1, outputTokens: 1 },
      message: {
        id: 'legacy-message:s1:2',
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        source: { provider: 'p', model: 'm', kind: 'model' },
      },
    });
    expect(l.session.deriveMessages().toArray()).toEqual([
      {
        id: 'legacy-message:s1:2',
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        source: { provider: 'p', model: 'm', kind: 'model' },
      },
    ]);
  });

  it('the older tool/result layout is wrapped; a replacing one inherits the id of the message it replaces', () => {
    const events = turn((s) => [
      ev(
        'assistant/message',
        s,
        {
          turn: 1,
          step: 1,
          message: {
            id: 'a1',
            role: 'assistant',
            content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }],
            source: model,
          },
        },
        { surfaceOp: 'append', sourceEventSeqs: [] },
      ),
      ev('tool/call', s + 1, { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{}' }),
      ev(
        'tool/result',
        s + 2,
        { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text: 'long' }], isError: false },
        { surfaceOp: 'append', sourceEventSeqs: [s + 1] },
      ),
      ev(
        'tool/result',
        s + 3,
        { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text: 'short' }], isError: false },
        { surfaceOp: { op: 'replace', start: s + 2, end: s + 2 }, sourceEventSeqs: [s + 2] },
      ),
    ]);
    const l = load(events);
    const msgs = l.session.deriveMessages().toArray();
    expect(msgs.map((m) => m.id)).toEqual(['a1', 'legacy-message:s1:4']);
    expect(msgs[1]).toEqual({
      id: 'legacy-message:s1:4',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'short' }], isError: false }],
      source: { kind: 'tool', callId: 'c1' },
    });
  });

  it('a current-looking event is never touched: a tool/result with a message and stray fields is judged as it is', () => {
    const l = load(
      turn((s) => [ev('user/message', s, { id: 'u', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'append' })]),
    );
    expect(l.warnings.filter((w) => w.code === 'LEGACY_IMPORT')).toEqual([]);
  });
});

describe('turn upgrades', () => {
  it('turn/start keeps {turn} when the trigger is whole, and refuses a malformed one', () => {
    const ok = load(turn(() => [], undefined, { turn: 1, trigger: { kind: 'message', source: { kind: 'user' } } }));
    expect(ok.session.at(0)!.data).toEqual({ turn: 1 });
    for (const bad of [
      { turn: 1, trigger: { kind: '' } },
      { turn: 1, trigger: 'message' },
      { turn: 1, trigger: { kind: 'x' }, extra: 1 },
      { turn: 0, trigger: { kind: 'x' } },
    ]) {
      const e = refused(turn(() => [], undefined, bad));
      expect(e.details).toMatchObject({ seq: 0, line: 2, rule: 'legacy-import' });
    }
  });

  it.each([
    [{ kind: 'aborted' }, { kind: 'aborted', reason: { kind: 'legacy' } }],
    [{ kind: 'disposed' }, { kind: 'aborted', reason: { kind: 'disposed' } }],
    [
      { kind: 'error', step: 1, failure: { message: 'm', code: 'C', status: 500 } },
      { kind: 'error', error: { message: 'm', code: 'C', status: 500 } },
    ],
    [
      { kind: 'error', step: 0, message: 'm', code: 'C' },
      { kind: 'error', error: { message: 'm', code: 'C' } },
    ],
    [
      { kind: 'error', step: 2, message: 'm' },
      { kind: 'error', error: { message: 'm', code: 'UNKNOWN' } },
    ],
  ])('turn/end reason %j is read as %j', (old, now) => {
    const l = load(turn(() => [], old));
    expect((l.session.at(3)!.data as { reason: unknown }).reason).toEqual(now);
  });

  it.each([
    [{ kind: 'completed', extra: 1 }],
    [{ kind: 'disposed', why: 'x' }],
    [{ kind: 'error', message: 'no step' }],
    [{ kind: 'error', step: 1, message: 'm', code: 7 }],
    [{ kind: 7 }],
  ])('a malformed turn/end reason %j is refused', (bad) => {
    expect(refused(turn(() => [], bad)).details).toMatchObject({ seq: 3, line: 5, rule: 'legacy-import' });
  });

  it('a turn/end with a field besides turn and reason is refused (dsh checks every turn/end)', () => {
    const events = turn(() => []);
    (events[3] as { data: Record<string, unknown> }).data.note = 'x';
    expect(refused(events).details).toMatchObject({ seq: 3, line: 5 });
  });
});

describe('steering/message', () => {
  it('{turn, message} unwraps; {turn, content, source} becomes a user message; anything else is refused', () => {
    const l = load(
      turn((s) => [
        ev(
          'steering/message',
          s,
          { turn: 1, message: { id: 'm1', role: 'user', content: [], source: { kind: 'user' } } },
          { surfaceOp: 'append' },
        ),
        ev(
          'steering/message',
          s + 1,
          { turn: 1, content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } },
          { surfaceOp: 'append' },
        ),
      ]),
    );
    expect(
      l.session
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['m1', 'legacy-message:s1:3']);
    expect(
      refused(
        turn((s) => [ev('steering/message', s, { turn: 1, content: [], source: { kind: 'user' }, extra: 1 }, { surfaceOp: 'append' })]),
      ).details,
    ).toMatchObject({ seq: 2, line: 4 });
  });
});

describe('what dsh restores without turn checks', () => {
  it('events outside any turn load with a warning naming the first such seq and its line', () => {
    const events = [
      ev(
        'user/message',
        0,
        { id: 'u', role: 'user', content: [{ type: 'text', text: 'q' }], source: { kind: 'user' } },
        { surfaceOp: 'append' },
      ),
      ev('assistant/chunk', 1, { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } }),
      ev(
        'assistant/message',
        2,
        { turn: 1, step: 1, message: { id: 'a', role: 'assistant', content: [{ type: 'text', text: 'r' }], source: model } },
        { surfaceOp: 'append', sourceEventSeqs: [1] },
      ),
    ];
    const l = load(events);
    expect(
      l.session
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['u', 'a']);
    const w = l.warnings.filter((x) => x.code === 'OUTSIDE_TURN');
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ seq: 1, line: 3 });
    // Appends after the load still obey the trace rules.
    expect(() => l.session.append('step/start', { turn: 1, step: 1 })).toThrow(/turn-enclosure/);
    l.session.append('turn/start', { turn: 1 });
  });

  it('request/header tools written as a list of names load', () => {
    const header = { config: { provider: 'p', model: 'm' }, tools: ['read', 'bash'] };
    const l = load(turn((s) => [ev('request/header', s, { header, reason: 'initial' })]));
    expect(l.session.requestHeader()?.tools).toEqual(['read', 'bash']);
    expect(() => load(turn((s) => [ev('request/header', s, { header: { ...header, tools: [''] }, reason: 'initial' })]))).toThrow(
      /tools\[0\]/,
    );
  });
});
