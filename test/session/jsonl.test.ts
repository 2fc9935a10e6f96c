/**
 * The dsh v0 JSONL codec (issue 2 item 6): header line, packed rows,
 * torn tails versus corruption, line numbers in every error, unknown and legacy types,
 * placeholders, and encode→load round trips.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeJsonl,
  encodeEvents,
  encodeJsonl,
  loadJsonl,
  Session,
  SessionError,
  type SessionErrorCode,
} from '../../src/session/index.js';
import { T0, assistantMsg, expectSessionError, fixedClock, fullTurn, newSession, openStep, userMsg } from './helpers.js';

const HEADER = { type: 'session', version: 0, id: 's1', createdAt: 1, cwd: '/work', delegationDepth: 0 };
const j = (v: unknown) => JSON.stringify(v);
const ev = (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) => ({
  type,
  seq,
  time: T0 + seq,
  data,
  ...extra,
});

/**
 * Lines 2…11 hold seqs 0…11: turn 1 complete (its three text deltas packed on line 5, seqs 3-5),
 * then turn 2 opened with a prompt and left open.
 */
function baseLines(): string[] {
  return [
    j(HEADER),
    j(ev('turn/start', 0, { turn: 1 })),
    j(ev('step/start', 1, { turn: 1, step: 1 })),
    j(ev('user/message', 2, userMsg('u1'), { surfaceOp: 'append', sourceEventSeqs: [0] })),
    j({ type: 'text-chunks', seq0: 3, time0: T0 + 3, data: { turn: 1, step: 1, index: 0, dt: [1, 1], texts: ['Hel', 'lo', '!'] } }),
    j(
      ev(
        'assistant/message',
        6,
        { turn: 1, step: 1, message: assistantMsg('a1', [{ type: 'text', text: 'Hello!' }]), usage: { inputTokens: 3, outputTokens: 2 } },
        { surfaceOp: 'append', sourceEventSeqs: [3, 4, 5] },
      ),
    ),
    j(ev('step/end', 7, { turn: 1, step: 1 })),
    j(ev('turn/end', 8, { turn: 1, reason: { kind: 'completed' } })),
    j(ev('turn/start', 9, { turn: 2 })),
    j(ev('step/start', 10, { turn: 2, step: 1 })),
    j(ev('user/message', 11, userMsg('u2'), { surfaceOp: 'append' })),
  ];
}
const text = (lines: string[]) => lines.join('\n') + '\n';
const closed = () => [...baseLines().slice(0, 8)]; // through turn 1's turn/end (line 8)

function loadError(t: string, code: SessionErrorCode): SessionError {
  return expectSessionError(() => loadJsonl(t, { file: 'f.jsonl' }), code);
}

describe('loading', () => {
  it('decodes rows, maps seqs to lines, repairs the open turn and marks the seed end', () => {
    const loaded = loadJsonl(text(baseLines()), { file: 'f.jsonl', clock: fixedClock() });
    expect(loaded.eventCount).toBe(12);
    expect(loaded.rowCount).toBe(10);
    expect([0, 2, 3, 4, 5, 6, 11].map((s) => loaded.lineOf(s))).toEqual([2, 4, 5, 5, 5, 6, 11]);
    expect(loaded.lineOf(12)).toBeUndefined();
    const s = loaded.session;
    expect(s.events[4]).toEqual({
      type: 'assistant/chunk',
      seq: 4,
      time: T0 + 4,
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'lo' } },
    });
    expect(s.events[5]!.time).toBe(T0 + 5);
    expect(loaded.repaired.map((d) => [d.type, d.seq, d.time])).toEqual([
      ['step/end', 12, T0 + 11],
      ['turn/end', 13, T0 + 11],
    ]);
    expect(s.events.slice(12).map((e) => e.type)).toEqual(['step/end', 'turn/end', 'session/end-seed']);
    expect(s.firstLiveSeq).toBe(14);
    expect(loaded.warnings.map((w) => w.code)).toEqual(['OPEN_TURN']);
    expect(
      s
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['u1', 'a1', 'u2']);
    expect(s.header).toEqual({ version: 0, id: 's1', createdAt: 1, cwd: '/work', delegationDepth: 0 });
  });
  it('repair: false leaves the turn open', () => {
    const loaded = loadJsonl(text(baseLines()), { repair: false });
    expect(loaded.repaired).toEqual([]);
    expect(loaded.session.trace.openTurn).toBe(2);
    expect(loaded.session.length).toBe(13);
  });
  it('a header-only file is an empty session', () => {
    const loaded = loadJsonl(`${j(HEADER)}\n`);
    expect(loaded.eventCount).toBe(0);
    expect(loaded.session.events.map((e) => e.type)).toEqual(['session/end-seed']);
  });
  it('tolerates CRLF line ends', () => {
    const lf = loadJsonl(text(baseLines()), { clock: () => 0 });
    const crlf = loadJsonl(text(baseLines()).replace(/\n/g, '\r\n'), { clock: () => 0 });
    expect(j(crlf.session.events)).toBe(j(lf.session.events));
    expect(crlf.warnings).toEqual(lf.warnings);
  });
  it('reports blank lines and reads on', () => {
    const lines = baseLines();
    lines.splice(3, 0, '');
    lines.splice(7, 0, '   \t');
    const loaded = loadJsonl(text(lines));
    expect(loaded.eventCount).toBe(12);
    expect(loaded.warnings.filter((w) => w.code === 'BLANK_LINE').map((w) => w.line)).toEqual([4, 8]);
    expect(loaded.lineOf(2)).toBe(5);
  });
  it('keeps a last line that parses but has no newline, with a warning', () => {
    const loaded = loadJsonl(closed().join('\n'));
    expect(loaded.eventCount).toBe(9);
    expect(loaded.tornTail).toBeUndefined();
    expect(loaded.warnings).toEqual([{ code: 'MISSING_FINAL_NEWLINE', line: 8, message: expect.stringContaining('line 8') }]);
  });
});

describe('torn tail versus corruption', () => {
  it('a truncated last line with no newline after the last turn/end is a torn tail', () => {
    const full = j(ev('step/end', 12, { turn: 2, step: 1 }));
    const t = text(baseLines()) + full.slice(0, 20);
    const loaded = loadJsonl(t, { file: 'f.jsonl' });
    expect(loaded.tornTail).toEqual({ line: 12, droppedLines: 1, reason: 'the last line is incomplete (no newline, not JSON)' });
    expect(loaded.warnings[0]).toMatchObject({ code: 'TORN_TAIL', line: 12 });
    expect(loaded.warnings[0]!.message).toContain('torn tail at line 12');
    expect(loaded.eventCount).toBe(12);
  });
  it('a torn tail may span several lines when no turn/end follows', () => {
    const lines = baseLines();
    lines.splice(9, 0, '{"type":"step/st');
    const loaded = loadJsonl(text(lines));
    expect(loaded.tornTail).toMatchObject({ line: 10, droppedLines: 3 });
    expect(loaded.warnings.find((w) => w.code === 'TORN_TAIL')!.message).toContain(
      'it and the 2 line(s) after it were not loaded (no later line records a turn/end',
    );
    expect(loaded.eventCount).toBe(10);
    expect(loaded.repaired.map((d) => d.type)).toEqual(['turn/end']);
  });
  const defects: [string, string][] = [
    ['truncated JSON', '{"type":"step/start","seq":1,"ti'],
    ['not JSON at all', 'garbage'],
    ['a JSON array', '[1,2]'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['a seq gap', j(ev('step/start', 5, { turn: 1, step: 1 }))],
    ['a missing seq', j({ type: 'step/start', time: 1, data: { turn: 1, step: 1 } })],
    ['a malformed row', j({ type: 'text-chunks', seq0: 1, time0: 0, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a', 'b'] } })],
    [
      'a row at the wrong seq',
      j({ type: 'text-chunks', seq0: 7, time0: 0, data: { turn: 1, step: 1, index: 0, dt: [0], texts: ['a', 'b'] } }),
    ],
  ];
  for (const [name, bad] of defects) {
    it(`${name} before a later turn/end is corruption, refused with its line`, () => {
      const lines = baseLines();
      lines[2] = bad; // line 3, seq 1
      const err = loadError(text(lines), 'CORRUPT_LOG');
      expect(err.details).toMatchObject({ line: 3, file: 'f.jsonl', rule: 'storage' });
      expect(err.message).toMatch(/^f\.jsonl:3: corrupt session log: /);
      expect(err.message).toContain('a later line (8) records a turn/end');
    });
    it(`${name} after the last turn/end is a torn tail`, () => {
      const lines = baseLines();
      lines[9] = bad; // line 10
      const loaded = loadJsonl(text(lines));
      expect(loaded.tornTail).toMatchObject({ line: 10, droppedLines: 2 });
    });
  }
  // Every way a packed row can be malformed, as line 5 (seqs 3-5) before turn 1's turn/end.
  const rowSpoils: [string, (r: Record<string, unknown> & { data: Record<string, unknown> }) => void][] = [
    ['an extra key', (r) => (r.extra = 1)],
    ['no time0', (r) => delete r.time0],
    ['a negative seq0', (r) => (r.seq0 = -1)],
    ['a fractional time0', (r) => (r.time0 = 0.5)],
    ['data an array', (r) => (r.data = [] as never)],
    ['an extra data key', (r) => (r.data.x = 1)],
    ['a string index', (r) => (r.data.index = '0')],
    ['texts not an array', (r) => (r.data.texts = 'a')],
    ['empty texts', (r) => ((r.data.texts = []), (r.data.dt = []))],
    ['a short dt', (r) => (r.data.dt = [1])],
    ['a fractional gap', (r) => (r.data.dt = [1, 1.5])],
    ['a numeric member', (r) => (r.data.texts = ['a', 1, 'c'])],
    [
      'an unknown row tag shape (tool-call row without id)',
      (r) => ((r.type = 'tool-call-chunks'), (r.data.args = r.data.texts), delete r.data.texts),
    ],
  ];
  for (const [name, spoil] of rowSpoils) {
    it(`a row with ${name} is refused as corrupt at its line`, () => {
      const lines = closed();
      const row = JSON.parse(lines[4]!) as Record<string, unknown> & { data: Record<string, unknown> };
      spoil(row);
      lines[4] = j(row);
      const err = loadError(text(lines), 'CORRUPT_LOG');
      expect(err.details.line).toBe(5);
      expect(err.message).toMatch(/^f\.jsonl:5: corrupt session log: malformed (text|tool-call)-chunks row: /);
    });
  }
  it('a defect on the turn/end line itself is corruption', () => {
    const lines = closed();
    lines[7] = j(ev('turn/end', 9, { turn: 1, reason: { kind: 'completed' } }));
    expect(loadError(text(lines), 'CORRUPT_LOG').details.line).toBe(8);
  });
  it('never crashes on arbitrary bytes', () => {
    for (const t of [
      '',
      '\n',
      '{',
      '{}\n',
      'null\n',
      '"session"\n',
      '\u0000\u0001',
      `${j(HEADER)}\n\u0000garbage`,
      `${j(HEADER)}\n{}\n${j(ev('turn/end', 0, {}))}\n`,
    ]) {
      let err: unknown;
      try {
        loadJsonl(t);
      } catch (e) {
        err = e;
      }
      if (err !== undefined) expect(err, JSON.stringify(t)).toBeInstanceOf(SessionError);
    }
  });
});

describe('header line', () => {
  const withHeader = (h: Record<string, unknown>) => `${j(h)}\n${closed().slice(1).join('\n')}\n`;
  it('refuses an empty file, a non-JSON or non-session first line', () => {
    expect(loadError('', 'CORRUPT_LOG').details.line).toBe(1);
    expect(loadError('not json\n', 'CORRUPT_LOG').message).toMatch(/^f\.jsonl:1: /);
    expect(loadError(`${j({ type: 'turn/start', seq: 0 })}\n`, 'CORRUPT_LOG').message).toContain('not a session header');
    expect(loadError(`${j([HEADER])}\n`, 'CORRUPT_LOG').details.line).toBe(1);
  });
  it('refuses a header without version', () => {
    const { version: _v, ...h } = HEADER;
    expect(loadError(withHeader(h), 'CORRUPT_LOG').message).toContain('no format "version"');
  });
  it('refuses a version it does not know as unsupported (1–4 are read as format 0: next-formats.test.ts)', () => {
    const err = loadError(withHeader({ ...HEADER, version: 5 }), 'FORMAT_UNSUPPORTED');
    expect(err.details).toMatchObject({ line: 1, rule: 'format-version' });
    expect(err.message).toContain('version 5 is not supported');
  });
  it('refuses a non-numeric version', () => {
    const err = loadError(withHeader({ ...HEADER, version: '0' }), 'INVALID_HEADER');
    expect(err.details.line).toBe(1);
  });
  it('refuses a header without delegationDepth (required on disk)', () => {
    const { delegationDepth: _d, ...h } = HEADER;
    expect(loadError(withHeader(h), 'CORRUPT_LOG').message).toContain('"delegationDepth"');
  });
  it('refuses a relative cwd, naming line 1', () => {
    const err = loadError(withHeader({ ...HEADER, cwd: 'work' }), 'INVALID_HEADER');
    expect(err.details).toMatchObject({ line: 1, path: '$.cwd' });
    expect(err.message).toMatch(/^f\.jsonl:line 1: /);
  });
});

describe('event validation on load names file, line, seq and rule', () => {
  it('a surface event without surfaceOp', () => {
    const lines = closed();
    const e = JSON.parse(lines[3]!) as Record<string, unknown>;
    delete e.surfaceOp;
    lines[3] = j(e);
    const err = loadError(text(lines), 'SURFACE_OP_REQUIRED');
    expect(err.details).toMatchObject({ line: 4, seq: 2, file: 'f.jsonl', rule: 'surface-op' });
    expect(err.message).toMatch(/^f\.jsonl:line 4: /);
  });
  it('a bad member of a packed row is reported at the row line', () => {
    const lines = closed();
    lines[4] = j({ type: 'text-chunks', seq0: 3, time0: T0, data: { turn: 1, step: 2, index: 0, dt: [1, 1], texts: ['a', 'b', 'c'] } });
    const err = loadError(text(lines), 'TRACE_VIOLATION');
    expect(err.details).toMatchObject({ line: 5, seq: 3, rule: 'step-enclosure' });
  });
  it('non-JSON-safe numbers cannot come from JSON, but an out-of-shape payload is caught', () => {
    const lines = closed();
    lines[1] = j(ev('turn/start', 0, { turn: 0 }));
    expect(loadError(text(lines), 'INVALID_EVENT').details).toMatchObject({ line: 2, seq: 0, path: '$.data.turn' });
  });
});

describe('lossless JSON on load', () => {
  const withTitle = (raw: string) => `${closed().join('\n')}\n{"type":"session/title","seq":9,"time":${T0},"data":${raw}}\n`;
  it('refuses -0 and numbers that parse to ±Infinity, with line and path', () => {
    for (const [raw, path] of [
      ['{"title":"t","n":-0}', '$.data.n'],
      ['{"title":"t","deep":[1,{"x":1e400}]}', '$.data.deep[1].x'],
      ['{"title":"t","neg":-1e999}', '$.data.neg'],
      ['{"title":"t","z":-0.0e5}', '$.data.z'],
      ['{"title":"t","list":[1,-0]}', '$.data.list[1]'],
      ['{"title":"t","list":[[1e400]]}', '$.data.list[0][0]'],
    ] as const) {
      const err = loadError(withTitle(raw), 'NON_JSON');
      expect(err.details).toMatchObject({ line: 9, seq: 9, path, eventType: 'session/title' });
    }
  });
  it('keeps a "__proto__" key as an own key, frozen', () => {
    const l = loadJsonl(withTitle('{"title":"t","__proto__":{"x":1}}')).session;
    const data = l.events[9]!.data as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(data, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.isFrozen(Object.getOwnPropertyDescriptor(data, '__proto__')!.value)).toBe(true);
  });
  it('freezes every loaded value even when Object.prototype is polluted, without copying inherited keys', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = { not: 'data' };
    try {
      const l = loadJsonl(withTitle('{"title":"t","nested":{"a":[1,{"b":2}]}}')).session;
      const data = l.events[9]!.data as { nested: { a: [number, object] } };
      expect(Object.isFrozen(data.nested.a[1])).toBe(true);
      expect(Object.keys(data)).toEqual(['title', 'nested']);
      expect(Object.isFrozen(proto.polluted)).toBe(false);
    } finally {
      delete proto.polluted;
    }
  });
  it('deeply nested loaded data is checked and frozen without a stack overflow', () => {
    const deep = `${'{"d":'.repeat(50_000)}-0${'}'.repeat(50_000)}`;
    expect(loadError(withTitle(`{"title":"t","v":${deep}}`), 'NON_JSON').details.path).toBe(`$.data.v${'.d'.repeat(50_000)}`);
  });
});

describe('verdict precedence (validation runs during the scan, the verdicts keep their order)', () => {
  /** Line 4 (seq 2) loses its surfaceOp: invalid, but only an event-level defect. */
  const invalidEarly = (): string[] => {
    const lines = closed();
    lines[3] = j(ev('user/message', 2, userMsg('u1'), { sourceEventSeqs: [0] }));
    return lines;
  };
  it('alone, the first invalid event is the verdict, with its line', () => {
    const err = loadError(text(invalidEarly()), 'SURFACE_OP_REQUIRED');
    expect(err.details).toMatchObject({ seq: 2, line: 4, file: 'f.jsonl' });
  });
  it('an unknown type later in the file outranks an earlier invalid event', () => {
    const lines = invalidEarly();
    lines.push(j(ev('future/thing', 9, { x: 1 })));
    expect(loadError(text(lines), 'FORMAT_UNSUPPORTED').details).toMatchObject({ eventType: 'future/thing', seq: 9, line: 9 });
  });
  it('storage corruption later in the file outranks an earlier invalid event', () => {
    const lines = invalidEarly();
    lines.splice(6, 0, '{"type":"step/end",'); // line 7, with turn/end still to come
    expect(loadError(text(lines), 'CORRUPT_LOG').details).toMatchObject({ line: 7 });
  });
  it('a torn tail does not hide an earlier invalid event', () => {
    const lines = invalidEarly();
    lines.push('{"type":"turn/st');
    expect(loadError(text(lines), 'SURFACE_OP_REQUIRED').details).toMatchObject({ seq: 2, line: 4 });
  });
  it('a refused header is the verdict only when the scan finds nothing worse', () => {
    const badHeader = [j({ ...HEADER, cwd: 5 }), ...closed().slice(1)];
    expect(loadError(text(badHeader), 'INVALID_HEADER').details).toMatchObject({ line: 1, file: 'f.jsonl' });
    const andUnknown = [...badHeader, j(ev('future/thing', 9, { x: 1 }))];
    expect(loadError(text(andUnknown), 'FORMAT_UNSUPPORTED').details).toMatchObject({ seq: 9, line: 9 });
    const andCorrupt = [...badHeader];
    andCorrupt.splice(6, 0, 'not json');
    expect(loadError(text(andCorrupt), 'CORRUPT_LOG').details).toMatchObject({ line: 7 });
  });
  /** 60 closed one-step turns (300 events on lines 2…301), seq `bad` without its surfaceOp. */
  const long = (bad: number, tail: string[] = []): string => {
    const lines = [j(HEADER)];
    let seq = 0;
    for (let t = 1; t <= 60; t++) {
      lines.push(j(ev('turn/start', seq++, { turn: t })));
      lines.push(j(ev('step/start', seq++, { turn: t, step: 1 })));
      const s = seq++;
      lines.push(j(ev('user/message', s, userMsg(`u${t}`), s === bad ? {} : { surfaceOp: 'append' })));
      lines.push(j(ev('step/end', seq++, { turn: t, step: 1 })));
      lines.push(j(ev('turn/end', seq++, { turn: t, reason: { kind: 'completed' } })));
    }
    return text([...lines, ...tail]);
  };
  it('names the right seq and line for a defect deep in a long log, wherever it falls in a batch', () => {
    expect(loadJsonl(long(-1)).eventCount).toBe(300);
    for (const bad of [2, 127, 132, 297]) {
      expect(loadError(long(bad), 'SURFACE_OP_REQUIRED').details).toMatchObject({ seq: bad, line: bad + 2 });
    }
  });
  it('in a long log too, a later unknown type or corruption outranks an invalid event validated long before', () => {
    expect(loadError(long(2, [j(ev('future/thing', 300, { x: 1 }))]), 'FORMAT_UNSUPPORTED').details).toMatchObject({ seq: 300, line: 302 });
    const corrupt = long(2, [
      '{"type":"turn/st',
      j(ev('turn/start', 300, { turn: 61 })),
      j(ev('turn/end', 301, { turn: 61, reason: { kind: 'completed' } })),
    ]);
    expect(loadError(corrupt, 'CORRUPT_LOG').details).toMatchObject({ line: 302 });
    expect(loadError(long(2, ['{"type":"turn/st']), 'SURFACE_OP_REQUIRED').details).toMatchObject({ seq: 2, line: 4 });
  });
});

describe('unknown and ignorable types', () => {
  const withPlugin = (e: Record<string, unknown>) => {
    const lines = closed();
    lines.push(j(e));
    return text(lines);
  };
  it('an unknown type without ignorable refuses the load (a newer writer)', () => {
    const err = loadError(withPlugin(ev('future/thing', 9, { x: 1 })), 'FORMAT_UNSUPPORTED');
    expect(err.details).toMatchObject({ eventType: 'future/thing', seq: 9, line: 9, file: 'f.jsonl', rule: 'known-types' });
    expect(err.message).toContain('f.jsonl:line 9: event type "future/thing" at seq 9 is unknown');
  });
  it('an ignorable unknown type is kept in the log and derives nothing', () => {
    const loaded = loadJsonl(withPlugin(ev('future/thing', 9, { x: 1 }, { ignorable: true })));
    expect(loaded.session.events[9]).toEqual({ type: 'future/thing', seq: 9, time: T0 + 9, data: { x: 1 }, ignorable: true });
    expect(loaded.session.deriveMessages().toArray().length).toBe(2);
  });
  it('a reader that owns a plugin type may declare it known', () => {
    const loaded = loadJsonl(withPlugin(ev('future/thing', 9, { x: 1 })), { knownTypes: new Set(['future/thing']) });
    expect(loaded.session.events[9]!.type).toBe('future/thing');
  });
  it('known plugin types load as they are', () => {
    const loaded = loadJsonl(withPlugin(ev('agent/inbox/spliced', 9, { target: 'next-turn', start: 0, inserted: [] })));
    expect(loaded.session.events[9]!.type).toBe('agent/inbox/spliced');
  });
});

describe('legacy imports', () => {
  it('converts old shapes on read and reports each conversion with its seq and line', () => {
    const lines = [
      j(HEADER),
      j(ev('turn/start', 0, { turn: 1, trigger: { kind: 'user' } })),
      j(ev('step/start', 1, { turn: 1, step: 1 })),
      j(
        ev(
          'steering/message',
          2,
          { turn: 1, content: [{ type: 'text', text: 'steer' }], source: { kind: 'user' } },
          { surfaceOp: 'append' },
        ),
      ),
      j(ev('user/message', 3, { content: [{ type: 'text', text: 'no id' }], source: { kind: 'user' } }, { surfaceOp: 'append' })),
      j(
        ev(
          'assistant/message',
          4,
          { turn: 1, step: 1, content: [{ type: 'text', text: 'ok' }], provenance: { provider: 'p', model: 'm' } },
          { surfaceOp: 'append' },
        ),
      ),
      j(ev('step/end', 5, { turn: 1, step: 1 })),
      j(ev('turn/end', 6, { turn: 1, reason: { kind: 'aborted' } })),
    ];
    const loaded = loadJsonl(text(lines), { file: 'old.jsonl' });
    const s = loaded.session;
    expect(s.events[0]!.data).toEqual({ turn: 1 });
    expect(s.events[2]).toEqual({
      type: 'user/message',
      seq: 2,
      time: T0 + 2,
      data: { role: 'user', content: [{ type: 'text', text: 'steer' }], source: { kind: 'user' }, id: 'legacy-message:s1:2' },
      surfaceOp: 'append',
    });
    expect(s.events[3]!.data).toEqual({
      content: [{ type: 'text', text: 'no id' }],
      source: { kind: 'user' },
      id: 'legacy-message:s1:3',
      role: 'user',
    });
    expect((s.events[3]!.data as { id: string }).id).toBe('legacy-message:s1:3');
    expect((s.events[4]!.data as { message: { id: string } }).message.id).toBe('legacy-message:s1:4');
    expect(s.events[6]!.data).toEqual({ turn: 1, reason: { kind: 'aborted', reason: { kind: 'legacy' } } });
    expect(loaded.warnings.filter((w) => w.code === 'LEGACY_IMPORT').map((w) => [w.seq, w.line])).toEqual([
      [0, 2],
      [2, 4],
      [3, 5],
      [4, 6],
      [6, 8],
    ]);
    expect(
      s
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['legacy-message:s1:2', 'legacy-message:s1:3', 'legacy-message:s1:4']);
  });
});

describe('placeholders in tokenised fixtures', () => {
  const tokenised = () => {
    const lines = closed();
    lines[0] = j({ ...HEADER, id: '{{sessionId}}', cwd: '{{cwd}}' });
    lines.splice(
      3,
      0,
      j(
        ev('request/header', 2, {
          header: { config: { provider: 'p', model: 'm' }, system: '{{system}}', tools: '{{tools}}' },
          reason: 'initial',
        }),
      ),
    );
    // Shift the later seqs by one.
    return lines.map((l, i) => {
      if (i <= 3) return l;
      const o = JSON.parse(l) as Record<string, unknown>;
      if (typeof o.seq === 'number') o.seq += 1;
      if (typeof o.seq0 === 'number') o.seq0 += 1;
      if (Array.isArray(o.sourceEventSeqs)) o.sourceEventSeqs = (o.sourceEventSeqs as number[]).map((x) => (x >= 2 ? x + 1 : x));
      return j(o);
    });
  };
  it('are warnings with placeholders: "warn"', () => {
    const loaded = loadJsonl(text(tokenised()), { placeholders: 'warn' });
    expect(loaded.warnings.map((w) => [w.code, w.line, w.seq])).toEqual([
      ['PLACEHOLDER', 1, undefined],
      ['PLACEHOLDER', 1, undefined],
      ['PLACEHOLDER', 4, 2],
      ['PLACEHOLDER', 4, 2],
    ]);
    expect(loaded.warnings[3]!.message).toContain('{{tools}}');
    expect(loaded.session.requestHeader()).toEqual({ config: { provider: 'p', model: 'm' }, system: '{{system}}', tools: '{{tools}}' });
  });
  it('a tokenised log with a dangling turn is repaired under the same leniency', () => {
    const lines = tokenised();
    lines.push(j(ev('turn/start', 10, { turn: 2 })));
    const loaded = loadJsonl(text(lines), { placeholders: 'warn' });
    expect(loaded.repaired.map((d) => d.type)).toEqual(['turn/end']);
    expect(loaded.session.trace.openTurn).toBeUndefined();
    expect(loaded.session.header.cwd).toBe('{{cwd}}');
    // Each placeholder is reported once, not once per validation pass.
    expect(loaded.warnings.filter((w) => w.code === 'PLACEHOLDER').length).toBe(4);
  });
  it('are errors by default', () => {
    const err = expectSessionError(() => loadJsonl(text(tokenised()), { file: 'f.jsonl' }), 'INVALID_HEADER');
    expect(err.details).toMatchObject({ line: 1, path: '$.cwd' });
    const lines = tokenised();
    lines[0] = j(HEADER);
    const err2 = expectSessionError(() => loadJsonl(text(lines), { file: 'f.jsonl' }), 'INVALID_EVENT');
    expect(err2.details).toMatchObject({ line: 4, seq: 2, path: '$.data.header.tools' });
  });
});

describe('encoding', () => {
  it('writes the header line in dsh field order with delegationDepth defaulting to 0', () => {
    const s = Session.create({ id: 'x', header: { cwd: '/w', parentSession: 'p', seedLength: 0 }, clock: () => 7 });
    expect(encodeJsonl(s.header, [])).toBe(
      '{"type":"session","version":0,"id":"x","createdAt":7,"cwd":"/w","parentSession":"p","seedLength":0,"delegationDepth":0}\n',
    );
  });
  it('packs runs by default and writes one event per line with pack: false', () => {
    const s = newSession();
    openStep(s, 1);
    for (let i = 0; i < 5; i++) s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: `t${i}` } });
    const packed = encodeEvents(s.events).split('\n');
    expect(packed.length).toBe(4);
    expect(JSON.parse(packed[2]!)).toMatchObject({ type: 'text-chunks', seq0: 2, data: { texts: ['t0', 't1', 't2', 't3', 't4'] } });
    const plain = encodeEvents(s.events, { pack: false }).split('\n');
    expect(plain.length).toBe(8);
    expect(plain.slice(0, 7).map((l) => JSON.parse(l) as unknown)).toEqual(s.events);
  });
  it('encode → load gives back the same events, byte for byte, and the same history', () => {
    const s = newSession();
    fullTurn(s, 1);
    openStep(s, 2);
    for (let i = 0; i < 4; i++)
      s.append('assistant/chunk', { turn: 2, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: `r${i}` } });
    s.append('user/message', userMsg('sum'), { surfaceOp: { op: 'replace', start: 2, end: 7 }, sourceEventSeqs: [2, 5, 7] });
    s.append('step/end', { turn: 2, step: 1 });
    s.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
    const t = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
    const loaded = loadJsonl(t);
    expect(loaded.rowCount).toBeLessThan(s.length);
    expect(j(loaded.session.events.slice(0, s.length))).toBe(j(s.events));
    expect(loaded.session.deriveMessages().toArray()).toEqual(s.deriveMessages().toArray());
    expect(loaded.session.surface.nodes).toEqual(s.surface.nodes);
    // And writing it again gives the same bytes.
    expect(encodeJsonl(loaded.header, loaded.session.events.slice(0, s.length))).toBe(t);
  });
  it('round-trips data nested 100,000 levels deep (deeper than JSON.stringify can go)', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) v = { d: v };
    const s = newSession();
    s.append('session/title', { deep: v } as never);
    const t = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
    expect(t.length).toBeGreaterThan(600_000);
    const loaded = loadJsonl(t);
    let cur = (loaded.session.events[0]!.data as { deep: Record<string, unknown> }).deep;
    let depth = 0;
    while (typeof cur === 'object') {
      cur = cur.d as Record<string, unknown>;
      depth++;
    }
    expect(depth).toBe(100_000);
    expect(cur).toBe('leaf');
  });
});

describe('decodeJsonl', () => {
  it('returns raw events and the header without validating events', () => {
    const d = decodeJsonl(text(baseLines()));
    expect(d.header).toEqual({ version: 0, id: 's1', createdAt: 1, cwd: '/work', delegationDepth: 0 });
    expect(d.events.length).toBe(12);
    expect(d.rowCount).toBe(10);
  });
});

describe('consecutive chunk lines are gathered into one run only while they stay in one block', () => {
  it('a chunk line naming another step is checked as its own event (refused here), not re-labelled into the run', () => {
    const lines = closed();
    const chunk = (seq: number, step: number, text: string) =>
      j(ev('assistant/chunk', seq, { turn: 2, step, chunk: { type: 'text-delta', index: 0, text } }));
    lines.push(
      j(ev('turn/start', 9, { turn: 2 })),
      j(ev('step/start', 10, { turn: 2, step: 1 })),
      chunk(11, 1, 'a'),
      chunk(12, 1, 'b'),
      chunk(13, 2, 'c'),
      chunk(14, 1, 'd'),
    );
    const err = loadError(text(lines), 'TRACE_VIOLATION');
    expect(err.details).toMatchObject({ line: 13, seq: 13, rule: 'step-enclosure' });
  });
});
