/**
 * Lossless on load as on append, and no input that crashes the loader (issue 11 items 2 and 3):
 * numbers `JSON.parse` would round are refused with file, line, seq and JSON path; chunk contents
 * are validated at load as at append; values nested 6,000 or 100,000 levels deep in any field
 * give a typed error with a bounded message, never a stack overflow or a TypeError.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { loadJsonl, Session, SessionError } from '../../src/session/index.js';
import { lossyNumber, lossyNumberScan, mayHoldLossyNumber, numberProblem } from '../../src/session/codec/numbers.js';
import { preview } from '../../src/session/json.js';
import { T0, expectSessionError } from './helpers.js';

const HEADER = '{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/work","delegationDepth":0}';
const user = (seq: number, content: string) =>
  `{"type":"user/message","seq":${seq},"time":${T0},"data":{"id":"u${seq}","role":"user","content":${content},` +
  '"source":{"kind":"user"}},"surfaceOp":"append"}';
const file = (...lines: string[]) => [HEADER, ...lines].join('\n') + '\n';

function refusal(text: string): SessionError {
  let err: unknown;
  try {
    loadJsonl(text, { file: 'f.jsonl' });
  } catch (e) {
    err = e;
  }
  expect(err, 'the load must be refused').toBeInstanceOf(SessionError);
  return err as SessionError;
}

describe('numbers JSON.parse would round are refused with file, line, seq and path', () => {
  const cases: [string, RegExp][] = [
    ['9007199254740993', /reads back as 9007199254740992/],
    ['1e-400', /underflow/],
    ['-0', /-0/],
    ['-0.0e5', /-0/],
    ['1e400', /Infinity/],
    ['-1e400', /-Infinity/],
    ['123456789012345678901234567890', /reads back as 1\.2345678901234568e\+29/],
    ['0.30000000000000000001', /reads back as 0\.3/],
  ];
  it.each(cases)('%s inside a message content array', (tok, why) => {
    const e = refusal(file(user(0, `[{"type":"text","text":"x","n":[1,{"k":${tok}}]}]`)));
    expect(e.code).toBe('NON_JSON');
    expect(e.details).toMatchObject({ file: 'f.jsonl', line: 2, seq: 0, path: '$.data.content[0].n[1].k', rule: 'lossless-json' });
    expect(e.message).toMatch(why);
    expect(e.message).toContain('f.jsonl:line 2');
  });

  it.each(cases)('%s in the header is refused on line 1', (tok) => {
    const e = refusal(`{"type":"session","version":0,"id":"s1","createdAt":${tok},"cwd":"/work","delegationDepth":0}\n`);
    expect(['NON_JSON', 'INVALID_HEADER', 'CORRUPT_LOG']).toContain(e.code);
    expect(e.details.line).toBe(1);
  });

  it('a lossy gap in a packed row is refused at the row line', () => {
    const rows = file(
      '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
      '{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}',
      '{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1e-400,1],"texts":["a","b","c"]}}',
      '{"type":"step/end","seq":5,"time":1,"data":{"turn":1,"step":1}}',
      '{"type":"turn/end","seq":6,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}',
    );
    const e = refusal(rows);
    expect(e.code).toBe('NON_JSON');
    expect(e.details).toMatchObject({ line: 4, seq: 2, path: '$.data.dt[0]' });
  });

  it('numbers a double holds exactly load, whatever their spelling; look-alikes inside strings are not numbers', () => {
    for (const tok of [
      '1e23',
      '0.1',
      '1.0',
      '1.5e-7',
      '100000000000000000000',
      '9007199254740992',
      '-0.5',
      '5e-324',
      '1.7976931348623157e308',
      '0e10',
    ]) {
      expect(numberProblem(tok), tok).toBeUndefined();
    }
    const l = loadJsonl(file(user(0, '[{"type":"text","text":"id 12345678901234567890, 1e400, -0 and 2024-12-00"}]')));
    expect(l.session.length).toBe(2);
    expect(lossyNumber('{"a":"-0","b":[{},"x",{"c":1e-400}]}')).toEqual({ path: '$.b[2].c', token: '1e-400', why: expect.any(String) });
    expect(lossyNumber('{"a\\"b":[0,-0]}')?.path).toBe('$["a\\"b"][1]');
  });
});

describe('the pre-check never hides a lossy number', () => {
  // Number tokens of every spelling JSON allows: sign, 1–40 integer digits (no leading zero
  // unless the integer part is 0), an optional fraction of 0–40 digits, an optional exponent with
  // 1–4 digits (leading zeros allowed, as JSON allows them).
  const digits = (min: number, max: number) =>
    fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((a) => a.join(''));
  const token = fc
    .record({
      neg: fc.boolean(),
      int: fc.oneof(
        fc.constant('0'),
        fc.tuple(fc.constantFrom(...'123456789'), digits(0, 39)).map(([a, b]) => a + b),
      ),
      frac: fc.option(digits(1, 40), { nil: undefined }),
      exp: fc.option(
        fc.tuple(fc.constantFrom('e', 'E', 'e+', 'e-', 'E-'), digits(1, 4)).map(([a, b]) => a + b),
        { nil: undefined },
      ),
    })
    .map(({ neg, int, frac, exp }) => `${neg ? '-' : ''}${int}${frac !== undefined ? `.${frac}` : ''}${exp ?? ''}`);
  // Strings that look like numbers, at any length, so the token lands at every alignment.
  const filler = fc.stringMatching(/^[a-z0-9 .,:-]{0,40}$/);
  it('lossyNumber (pre-check, then scan) finds exactly what the full scan finds', () => {
    fc.assert(
      fc.property(filler, fc.array(fc.tuple(token, filler), { minLength: 1, maxLength: 6 }), (pad, items) => {
        const text = `{"pad":${JSON.stringify(pad)},"xs":[${items.map(([t, f]) => `${t},${JSON.stringify(f)}`).join(',')}]}`;
        expect(lossyNumber(text)).toEqual(lossyNumberScan(text));
        if (items.some(([t]) => numberProblem(t) !== undefined)) expect(mayHoldLossyNumber(text)).toBe(true);
      }),
      { numRuns: 3000, seed: 11 },
    );
  });
  it('ordinary lines do not fire it (they are not tokenised at all)', () => {
    expect(
      mayHoldLossyNumber(
        '{"type":"turn/start","seq":12,"time":1764000000000,"data":{"turn":3,"id":"3e8f0a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b",' +
          '"at":"2026-01-02"}}',
      ),
    ).toBe(false);
    for (const t of ['9007199254740993', '1.000000000000001', '1e400', '1e-400', '5e-324', '-0', '-0.0', '-0e3'])
      expect(mayHoldLossyNumber(`{"v":[1,${t}]}`), t).toBe(true);
  });
});

// Places the loader handles apart from the freeze walk of an event (the envelope, chunk lines it
// keeps as compact runs, packed rows): a faster check there must still refuse each of these.
describe('lossy numbers in the envelope, in chunk lines kept as runs and in packed rows', () => {
  const turn = '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}';
  const step = '{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}';
  const chunk = (seq: number, index: string) =>
    `{"type":"assistant/chunk","seq":${seq},"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":${index},"text":"a"}}}`;
  const row = (seq0: string, turnTok: string, index: string, dt: string) =>
    `{"type":"text-chunks","seq0":${seq0},"time0":1,"data":{"turn":${turnTok},"step":1,"index":${index},"dt":[${dt},1],` +
    '"texts":["a","b","c"]}}';
  // [where, token, log, line, seq, path]
  const cases: [string, string, string, number, number, string][] = [];
  for (const tok of ['-0', '1e400', '1e-400', '1.23456789e-320', '1.00000000000000001']) {
    cases.push(['an event time', tok, file(`{"type":"turn/start","seq":0,"time":${tok},"data":{"turn":1}}`), 2, 0, '$.time']);
    // three chunk lines of one block: a run the loader keeps compact, its members never walked
    cases.push(['a chunk index', tok, file(turn, step, chunk(2, tok), chunk(3, tok), chunk(4, tok)), 4, 2, '$.data.chunk.index']);
  }
  for (const tok of ['1e400', '1e-400', '1.23456789e-320', '1.00000000000000001'])
    cases.push(['a row index', tok, file(turn, step, row('2', '1', tok, '1')), 4, 2, '$.data.index']);
  for (const tok of ['1e400', '-1e400']) cases.push(['a row turn', tok, file(turn, step, row('2', tok, '0', '1')), 4, 2, '$.data.turn']);
  cases.push(['a row seq0', '-0', file(row('-0', '1', '0', '1')), 2, 0, '$.seq0']);
  cases.push(['a row gap', '1E-0400', file(turn, step, row('2', '1', '1', '1E-0400')), 4, 2, '$.data.dt[0]']);
  it.each(cases)('%s of %s is refused with its line, seq and path', (_where, _tok, log, line, seq, path) => {
    const e = refusal(log);
    expect(e.code, e.message).toBe('NON_JSON');
    expect(e.details).toMatchObject({ file: 'f.jsonl', line, seq, path, rule: 'lossless-json' });
    expect(e.message).toContain(`f.jsonl:line ${line}:`);
    expect(e.message).not.toMatch(/^seed /);
  });
  it('the same numbers spelled exactly load (0, 1e-300, 1e300, 5e-324 as written by a double)', () => {
    for (const tok of ['0', '0.0', '0e-400', '1e-300', '1e300', '5e-324']) {
      const l = loadJsonl(file(user(0, `[{"type":"text","text":"x","n":${tok}}]`)));
      expect(l.session.length, tok).toBe(2);
    }
  });
});

describe('chunk contents are validated at load as at append', () => {
  const chunkLog = (chunk: string) =>
    file(
      '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
      '{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}',
      `{"type":"assistant/chunk","seq":2,"time":1,"data":{"turn":1,"step":1,"chunk":${chunk}}}`,
    );
  it.each([
    ['{"type":"finish","reason":{"kind":"exploded"}}', '$.data.chunk.reason.kind'],
    ['{"type":"finish","reason":{"kind":"error"}}', '$.data.chunk.reason.failure'],
    ['{"type":"block-start","index":0,"blockType":"video"}', '$.data.chunk.blockType'],
    ['{"type":"text-delta","index":-1,"text":"a"}', '$.data.chunk.index'],
    ['{"type":"text-delta","index":0,"text":7}', '$.data.chunk.text'],
    ['{"type":"tool-call-delta","index":0,"argumentsDelta":"{"}', '$.data.chunk.id'],
    ['{"type":"usage","usage":{"inputTokens":"1","outputTokens":1}}', '$.data.chunk.usage.inputTokens'],
    ['{"type":"block-end","index":0,"block":{"type":"text"}}', '$.data.chunk.block.text'],
    ['{"type":"teleport","index":0}', '$.data.chunk.type'],
  ])('%s is refused at its line, and at append', (chunk, path) => {
    const e = refusal(chunkLog(chunk));
    expect(e.code).toBe('INVALID_EVENT');
    expect(e.details).toMatchObject({ line: 4, seq: 2, path });
    const s = Session.create();
    s.append('turn/start', { turn: 1 });
    s.append('step/start', { turn: 1, step: 1 });
    const a = expectSessionError(() => s.append('assistant/chunk', { turn: 1, step: 1, chunk: JSON.parse(chunk) }), 'INVALID_EVENT');
    expect(a.details.path).toBe(path);
  });
});

describe('no input crashes the loader', () => {
  const deep = (n: number, leaf = '1') => '['.repeat(n) + leaf + ']'.repeat(n);
  const deepObj = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  for (const n of [6_000, 100_000]) {
    const places: [string, string][] = [
      ['seq', `{"type":"turn/start","seq":${deep(n)},"time":1,"data":{"turn":1}}`],
      ['time', `{"type":"turn/start","seq":0,"time":${deepObj(n)},"data":{"turn":1}}`],
      ['type', `{"type":${deep(n, '"x"')},"seq":0,"time":1,"data":{"turn":1}}`],
      ['data', `{"type":"turn/start","seq":0,"time":1,"data":${deepObj(n)}}`],
      ['message content', user(0, `[{"type":"text","text":"x","extra":${deep(n, '-0')}}]`)],
      [
        'surfaceOp',
        '{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","content":[],"source":{"kind":"user"}},' +
          `"surfaceOp":${deepObj(n)}}`,
      ],
      [
        'sourceEventSeqs',
        '{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","content":[],"source":{"kind":"user"}},' +
          `"surfaceOp":"append","sourceEventSeqs":${deep(n)}}`,
      ],
      [
        'row dt',
        `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[${deep(n)},1],"texts":["a","b","c"]}}`,
      ],
      [
        'row texts',
        `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":${deep(n)},"dt":[1,1],"texts":["a","b","c"]}}`,
      ],
      ['an unknown type', `{"type":"plugin/x","seq":0,"time":1,"data":${deep(n)},"ignorable":true}`],
    ];
    it.each(places)(`nesting ${n} deep in %s: a typed answer with a line, and a bounded message`, (_where, line) => {
      let err: unknown;
      try {
        loadJsonl(file(line, '{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}'), {
          file: 'deep.jsonl',
        });
      } catch (e) {
        err = e;
      }
      if (err === undefined) return; // accepted (an ignorable plugin event may hold any JSON)
      expect(err).toBeInstanceOf(SessionError);
      const e = err as SessionError;
      expect(e.details.line, e.message).toBeGreaterThan(0);
      expect(e.message.length).toBeLessThan(2_000);
    });
    it(`nesting ${n} deep in a header field`, () => {
      const e = refusal(`{"type":"session","version":${deep(n)},"id":"s1","createdAt":1,"delegationDepth":0}\n`);
      expect(e.details.line).toBe(1);
      expect(e.message.length).toBeLessThan(2_000);
    });
  }

  it('preview is bounded and total', () => {
    const v: unknown[] = [];
    let cur = v;
    for (let i = 0; i < 100_000; i++) {
      const next: unknown[] = [];
      cur.push(next);
      cur = next;
    }
    expect(preview(v).length).toBeLessThanOrEqual(61);
    expect(preview('x'.repeat(1e6)).length).toBeLessThan(70);
    expect(preview(-0)).toBe('-0');
    expect(
      preview(
        new Proxy(
          {},
          {
            ownKeys: () => {
              throw new Error('no');
            },
          },
        ),
      ),
    ).toContain('unreadable');
  });
});
