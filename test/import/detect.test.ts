/**
 * Format detection by content, refusals of what is not a known log, and hostile inputs: a foreign
 * file cut anywhere still reads (its torn line counted) or is refused with a typed error.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { detect, FOREIGN_FORMATS, ImportError, importText, knownFormats } from '../../src/import/index.js';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { describeShared, repoRoot, sharedPath } from '../support/shared.js';

const real = (p: string): string => readFileSync(sharedPath('fixtures', 'real', p), 'utf8');

function importError(f: () => unknown): ImportError {
  try {
    f();
  } catch (e) {
    if (e instanceof ImportError) return e;
    throw e;
  }
  throw new Error('expected an ImportError');
}

describeShared('detection by content', () => {
  const cases: [string, string][] = [
    ['claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl', 'claude-code'],
    ['localpush-codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl', 'codex'],
    ['agent-sessions-schema/codex/small.jsonl', 'codex'],
    ['pi-mono/large-session.jsonl', 'pi'],
    ['openhands/basic.json', 'openhands'],
    ['openhands/output.jsonl', 'openhands'],
    ['swe-agent/function_calling_simple.traj', 'swe-agent'],
  ];
  for (const [f, id] of cases) {
    it(`${f} is read as ${id}, whatever the file is called`, () => {
      expect(importText(real(f), { file: 'renamed.txt' })!.format.id).toBe(id);
    });
  }

  it('a dsh log (whose header is also type "session", like pi\'s) is left to the codec', () => {
    const text = readFileSync(`${repoRoot}/examples/fix-typo.jsonl`, 'utf8');
    expect(detect(text)).toEqual({ kind: 'dsh' });
    expect(importText(text)).toBeUndefined();
    for (const f of ['dsh/acp-agent__fs-read.jsonl']) expect(detect(readFileSync(sharedPath('fixtures', f), 'utf8')).kind).toBe('dsh');
  });

  it('a single-line (minified) trajectory is read like a pretty-printed one', () => {
    const doc = JSON.parse(real('swe-agent/swe-agent__test-repo-i1.traj'));
    const a = importText(JSON.stringify(doc), { file: 'x.traj' })!;
    const b = importText(JSON.stringify(doc, null, 2), { file: 'x.traj' })!;
    expect(a.sessions[0]!.session.deriveMessages().toArray()).toEqual(b.sessions[0]!.session.deriveMessages().toArray());
  });

  it('a JSONL file cut at any byte still reads: the torn line is counted, the rest mapped (or a typed refusal)', () => {
    const text = real('claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: text.length }), (cut) => {
        const part = text.slice(0, cut);
        let r;
        try {
          r = importText(part, { file: 'cut.jsonl' });
        } catch (e) {
          expect(e).toBeInstanceOf(ImportError);
          return;
        }
        expect(r!.format.id).toBe('claude-code');
        const torn = !part.endsWith('\n') && !part.endsWith('}');
        if (torn && part.includes('\n')) expect(r!.sessions[0]!.losses.map((l) => l.field).join()).toMatch(/last line/);
      }),
      { numRuns: 60 },
    );
  });
});

describe('refusals name the known formats', () => {
  it('JSON that is no known log: UNKNOWN_FORMAT, listing every format', () => {
    const e = importError(() => importText('{"foo":1}\n{"bar":2}\n', { file: 'x.jsonl' }));
    expect(e.code).toBe('UNKNOWN_FORMAT');
    for (const f of FOREIGN_FORMATS) expect(e.message).toContain(f.label);
    expect(e.message).toContain('dsh session log');
    expect(knownFormats()).toContain('SWE-agent');
  });

  it('names the line of the record it judged (blank lines before it counted)', () => {
    const e = importError(() => importText('\n\n{"type":"x","data":{}}\n', { file: 'x.jsonl' }));
    expect(e.message.startsWith('x.jsonl:3: ')).toBe(true);
    expect(e.details.line).toBe(3);
  });

  it('a JSON array that is not a trajectory: UNKNOWN_FORMAT saying so', () => {
    for (const t of ['[1,2,3]', '[]', '[{"id":1}]', '[{"source":"user"}]']) {
      const e = importError(() => importText(t, { file: 'a.json' }));
      expect(e.code).toBe('UNKNOWN_FORMAT');
      expect(e.message).toMatch(/JSON array that is not an OpenHands trajectory/);
    }
  });

  it('a truncated JSON document: MALFORMED_SOURCE with its line and column', () => {
    const doc = JSON.stringify({ history: [{ role: 'user', content: 'fix it' }], info: {} }, null, 2);
    const e = importError(() => importText(doc.slice(0, doc.length - 7), { file: 'cut.traj' }));
    expect(e.code).toBe('MALFORMED_SOURCE');
    expect(e.details.line).toBeGreaterThan(1);
    expect(e.message).toMatch(/cut\.traj: .*line \d+, column \d+.*cut short/);
  });
});

describe('mapping rules', () => {
  const piHeader = '{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}';
  const piLine = (m: object): string => JSON.stringify({ type: 'message', timestamp: '2025-01-01T00:00:01Z', message: m });

  it('a result with no call in its step is kept as an import user message and counted, never dropped', () => {
    const text = [
      piHeader,
      piLine({ role: 'user', content: [{ type: 'text', text: 'go' }] }),
      piLine({ role: 'assistant', provider: 'p', model: 'm', content: [{ type: 'text', text: 'ok' }], stopReason: 'stop' }),
      piLine({
        role: 'toolResult',
        toolCallId: 'nope',
        toolName: 'read',
        content: [{ type: 'text', text: 'orphan text' }],
        isError: false,
      }),
    ].join('\n');
    const s = importText(text)!.sessions[0]!;
    expect(s.losses).toEqual([
      { field: 'tool result pairing', count: 1, why: expect.stringMatching(/no call with this id/), firstLine: 4 },
    ]);
    const kept = s.session.events.find((e) => e.type === 'user/message' && JSON.stringify(e.data).includes('orphan text'));
    expect(kept?.data).toMatchObject({ source: { kind: 'plugin', plugin: 'import', unpairedToolResult: 'nope' } });
  });

  it('a call id repeated in one response gets a suffix (counted), so each call keeps its own result', () => {
    const text = [
      piHeader,
      piLine({ role: 'user', content: 'go' }),
      piLine({
        role: 'assistant',
        provider: 'p',
        model: 'm',
        content: [
          { type: 'toolCall', id: 'c', name: 'a', arguments: {} },
          { type: 'toolCall', id: 'c', name: 'b', arguments: {} },
        ],
        stopReason: 'toolUse',
      }),
      piLine({ role: 'toolResult', toolCallId: 'c', toolName: 'a', content: [{ type: 'text', text: 'one' }], isError: false }),
    ].join('\n');
    const s = importText(text)!.sessions[0]!;
    expect(s.session.events.filter((e) => e.type === 'tool/call').map((e) => (e.data as { callId: string }).callId)).toEqual(['c', 'c#2']);
    expect(s.losses.map((l) => l.field)).toContain('tool call id (repeated in one response)');
  });

  it('hostile values (-0, huge and negative token counts, a relative cwd, bad times) never make an invalid log', () => {
    const text = [
      '{"type":"session","id":"s1","timestamp":"not a time","cwd":"C:\\\\Users\\\\me"}',
      piLine({ role: 'user', content: 'go' }),
      '{"type":"message","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","provider":"p","model":"m",' +
        '"content":[],"usage":{"input":-0,"output":-5,"cacheRead":1e308,"cacheWrite":"x","cost":{"total":-0}},"stopReason":"stop",' +
        '"timestamp":-1}}',
    ].join('\n');
    const s = importText(text)!.sessions[0]!;
    expect(s.header.cwd).toBeUndefined();
    expect(s.losses.map((l) => l.field)).toContain('cwd');
    const back = loadJsonl(encodeJsonl(s.header, s.session.events.slice(0, s.eventCount)));
    expect(back.eventCount).toBe(s.eventCount);
    const msg = s.session.events.find((e) => e.type === 'assistant/message')!;
    expect((msg.data as { usage: object }).usage).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 1e308 });
  });
});

describe('plainlyDsh: reading a dsh log without loading the formats', () => {
  // The first line of a real file of each kind this build reads, and of dsh's own logs.
  const firstLines = [
    '{"type":"session","version":0,"id":"a","createdAt":1,"cwd":"/"}',
    '{"type":"session","version":3,"id":"b","createdAt":1767225600000}',
    '{"type":"session","id":"c","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}',
    '{"type":"turn/start","seq":4,"data":{}}',
    '{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u","sessionId":"s"}',
    '{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}',
    '[{"role":"user"}]',
    '{"a":',
    '42',
    '"text"',
    'not json',
  ];
  const head = fc.tuple(
    fc.constantFrom('', '\uFEFF'),
    fc.constantFrom('', ' ', '\n', '\n\n  '),
    fc.oneof(fc.constantFrom(...firstLines), fc.json(), fc.string()),
    fc.constantFrom('', '\n', '\n{"type":"x","seq":1,"data":{}}\n'),
  );

  it('says yes only where detect says dsh, and says yes for every dsh first line', async () => {
    const { plainlyDsh } = await import('../../src/import/first-line.js');
    fc.assert(
      fc.property(head, ([bom, lead, line, rest]) => {
        const text = `${bom}${lead}${line}${rest}`;
        if (plainlyDsh(text)) expect(detect(text)).toEqual({ kind: 'dsh' });
        // The converse, for a first line that is a JSON object: dsh by detect is dsh at first sight.
        if (detect(text).kind === 'dsh') expect(plainlyDsh(text), text).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(plainlyDsh(`${firstLines[0]}\n`)).toBe(true);
    expect(plainlyDsh(`${firstLines[1]}\n`)).toBe(true); // a dsh header of a newer format version
    expect(plainlyDsh(`${firstLines[2]}\n`)).toBe(false); // pi's session header: the formats decide
    expect(plainlyDsh(`${firstLines[4]}\n`)).toBe(false);
  });
});
