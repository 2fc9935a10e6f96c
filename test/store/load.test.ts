/**
 * How the store reads a log: streamed (`loadJsonlFile`), whatever its size (small logs were once
 * read whole). It must give the reference verdict (`loadJsonl` on the file's bytes: same events,
 * warnings, torn tail, repair, or the same refusal), and a good-byte length that is exactly the
 * lines before the torn tail.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Session, encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { readLog } from '../../src/store/load.js';
import { SessionStore } from '../../src/store/index.js';
import { appendTurn, fixedClock, T0 } from './support/events.js';
import { tempDir } from './support/tmp.js';
import { hasShared, sharedPath } from '../support/shared.js';

type Verdict = Record<string, unknown>;

function summarize(
  run: () => {
    session: Session;
    eventCount: number;
    rowCount: number;
    warnings: unknown[];
    tornTail?: unknown;
    repaired: unknown[];
    lineOf(seq: number): number | undefined;
  },
): Verdict {
  try {
    const r = run();
    const lines: (number | undefined)[] = [];
    for (let q = 0; q < r.eventCount; q += Math.max(1, Math.floor(r.eventCount / 17))) lines.push(r.lineOf(q));
    return {
      header: r.session.header,
      events: JSON.stringify(r.session.events.slice(0, r.eventCount + r.repaired.length)),
      eventCount: r.eventCount,
      rowCount: r.rowCount,
      warnings: r.warnings,
      tornTail: r.tornTail ?? null,
      repaired: r.repaired,
      lines,
    };
  } catch (e) {
    return { error: (e as { code?: string }).code ?? String(e), message: (e as Error).message };
  }
}

/** The reference verdict, and the store's whole and streamed reads (with their good lengths). */
async function verdicts(
  text: string | Buffer,
  placeholders?: 'warn',
): Promise<{ ref: Verdict; streamed: Verdict; good: [number, boolean] | undefined }> {
  const file = join(tempDir(), 'session.jsonl');
  writeFileSync(file, text);
  const p = placeholders ? { placeholders } : {};
  // From the bytes, so the reference checks them as UTF-8 too (a text has no bytes left to check).
  const ref = summarize(() => loadJsonl(readFileSync(file), { file, clock: () => T0, ...p }));
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const r = await readLog(fh, file, size, { clock: () => T0, ...p }).then(
      (x) => ({ ok: x }),
      (e: unknown) => ({ err: e }),
    );
    const streamed =
      'ok' in r
        ? summarize(() => r.ok)
        : summarize(() => {
            throw r.err;
          });
    return { ref, streamed, good: 'ok' in r ? [r.ok.goodLength, r.ok.endsWithNewline] : undefined };
  } finally {
    await fh.close();
  }
}

function sampleLog(turns = 2, opts: { openTurnAfter?: number } = {}): string {
  const s = Session.create({ id: 'sample', header: { cwd: '/w' }, clock: fixedClock() });
  for (let i = 0; i < turns; i++) appendTurn(s, { deltas: 4 + i });
  if (opts.openTurnAfter !== undefined) appendTurn(s, { stopAfter: opts.openTurnAfter });
  return encodeJsonl(s.header, s.events);
}

const lines = (t: string): string[] => t.split('\n');

const CASES: [string, () => string | Buffer][] = [
  ['a clean log', () => sampleLog()],
  [
    'one event per line (no rows)',
    () => {
      const s = Session.create({ id: 'u', header: { cwd: '/w' }, clock: fixedClock() });
      appendTurn(s, { deltas: 7 });
      return encodeJsonl(s.header, s.events, { pack: false });
    },
  ],
  ['a header only', () => sampleLog(0)],
  ['a torn last line', () => `${sampleLog()}{"type":"turn/start","seq":`],
  [
    'a torn line followed by whole lines but no turn/end',
    () => {
      const t = sampleLog(1, { openTurnAfter: 6 });
      const l = lines(t);
      l.splice(l.length - 3, 0, '{"broken');
      return l.join('\n');
    },
  ],
  [
    'a defect before a committed turn/end (corrupt)',
    () => {
      const l = lines(sampleLog());
      l[4] = '{"broken';
      return l.join('\n');
    },
  ],
  [
    'a seq gap before a turn/end (corrupt)',
    () => {
      const l = lines(sampleLog());
      l.splice(3, 1);
      return l.join('\n');
    },
  ],
  ['a turn left open at a tool call (repair)', () => sampleLog(1, { openTurnAfter: 10 })],
  ['a turn left open before the assistant message (repair)', () => sampleLog(1, { openTurnAfter: 5 })],
  ['no final newline', () => sampleLog().replace(/\n$/, '')],
  [
    'blank lines and CRLF',
    () =>
      lines(sampleLog())
        .map((l, i) => (i === 3 ? `${l}\r\n   ` : l))
        .join('\n'),
  ],
  [
    'multi-byte text split anywhere',
    () => {
      const s = Session.create({ id: 'mb', header: { cwd: '/w' }, clock: fixedClock() });
      s.append('turn/start', { turn: 1 });
      s.append('step/start', { turn: 1, step: 1 });
      s.append(
        'user/message',
        { id: 'u', role: 'user', content: [{ type: 'text', text: 'héllo wörld — 😀 日本語 '.repeat(20) }], source: { kind: 'user' } },
        { surfaceOp: 'append' },
      );
      s.append('step/end', { turn: 1, step: 1 });
      s.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
      return encodeJsonl(s.header, s.events);
    },
  ],
  [
    'a log bigger than a read chunk, with multi-byte text, torn',
    () => {
      const s = Session.create({ id: 'big', header: { cwd: '/w' }, clock: fixedClock() });
      for (let t = 1; t <= 40; t++) {
        s.append('turn/start', { turn: t });
        s.append('step/start', { turn: t, step: 1 });
        s.append(
          'user/message',
          {
            id: `u${t}`,
            role: 'user',
            content: [{ type: 'text', text: `${t} héllo — 😀 日本語 `.repeat(3000) }],
            source: { kind: 'user' },
          },
          { surfaceOp: 'append' },
        );
        s.append('step/end', { turn: t, step: 1 });
        s.append('turn/end', { turn: t, reason: { kind: 'completed' } });
      }
      return `${encodeJsonl(s.header, s.events)}{"type":"turn/start","seq":200,"time":1,"data":{"tu`;
    },
  ],
  [
    'a malformed row at the tail',
    () => {
      const t = sampleLog(1, { openTurnAfter: 6 });
      return `${t}{"type":"text-chunks","seq0":999,"time0":1,"data":{}}\n`;
    },
  ],
  [
    'an unknown event type (newer writer)',
    () => {
      const l = lines(sampleLog(1));
      const n = l.length - 1;
      return [...l.slice(0, n), `{"type":"future/thing","seq":${n - 1},"time":1,"data":{}}`, ''].join('\n');
    },
  ],
  [
    'an ignorable unknown event type',
    () => {
      const l = lines(sampleLog(1));
      const n = l.length - 1;
      return [...l.slice(0, n), `{"type":"future/thing","seq":${n - 1},"time":1,"data":{},"ignorable":true}`, ''].join('\n');
    },
  ],
  [
    'an invalid event shape',
    () => {
      const l = lines(sampleLog(1));
      l[1] = l[1]!.replace('"turn":1', '"turn":"1"');
      return l.join('\n');
    },
  ],
  [
    'bytes that are not UTF-8 on committed lines (reported, decoded as U+FFFD)',
    () => {
      const raw = Buffer.from(sampleLog());
      // Inside string values (the first and the last text), so the lines stay JSON.
      raw[raw.indexOf('"text":"') + 8] = 0xff;
      raw[raw.lastIndexOf('"text":"') + 8] = 0xc0;
      return raw;
    },
  ],
  ['an empty file', () => ''],
  ['a header that is not JSON', () => '{"type":"session",\n'],
  ['an unknown format version', () => '{"type":"session","version":5,"id":"x","createdAt":1,"delegationDepth":0}\n'],
  [
    'a format 2 log (read as format 0)',
    () =>
      '{"type":"session","version":2,"id":"x","createdAt":1,"isSeeded":false,"delegationDepth":0}\n{"type":"turn/start",' +
      '"data":{"turn":1}}\n{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}\n{"type":"turn/st',
  ],
  ['a header without delegationDepth', () => '{"type":"session","version":0,"id":"x","createdAt":1}\n'],
];

describe("the store's streamed read agrees with loadJsonl", () => {
  for (const [name, make] of CASES) {
    it(name, async () => {
      const text = make();
      const raw = Buffer.from(text);
      const { ref, streamed, good } = await verdicts(text);
      if (Buffer.isBuffer(text)) expect((ref.warnings as { code: string }[]).filter((w) => w.code === 'INVALID_UTF8')).toHaveLength(2);
      expect(streamed).toEqual(ref);
      if ('error' in ref) return;
      const [goodLength, endsWithNewline] = good!;
      const torn = ref.tornTail as { line: number } | null;
      if (torn) {
        // Exactly the lines before the torn one.
        const prefix = raw.subarray(0, goodLength).toString('utf8');
        expect(prefix.endsWith('\n')).toBe(true);
        expect(prefix.split('\n').length - 1).toBe(torn.line - 1);
      } else {
        expect(goodLength).toBe(raw.length);
      }
      // Computed from the bytes: the good region ends with a newline (or is empty).
      expect(endsWithNewline).toBe(goodLength === 0 || raw[goodLength - 1] === 0x0a);
    });
  }

  const real = hasShared
    ? readdirSync(sharedPath('fixtures', 'dsh'))
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
    : [];
  it.runIf(real.length > 0)(`on the ${real.length} real dsh logs (placeholders kept, as for fixtures)`, async () => {
    let loaded = 0;
    for (const f of real) {
      const { ref, streamed } = await verdicts(readFileSync(sharedPath('fixtures', 'dsh', f)), 'warn');
      expect(streamed, f).toEqual(ref);
      if (!('error' in ref)) loaded++;
    }
    // Most real logs load; the few the codec refuses must be refused the same way.
    expect(loaded).toBeGreaterThan(real.length * 0.8);
  });
});

describe('open() of a small log', () => {
  it('streams it, moves the torn tail to a sidecar and persists the repair', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const a = await st.create({ cwd: '/w', id: 'big' });
    appendTurn(a.session);
    appendTurn(a.session, { stopAfter: 10 });
    await a.close();
    writeFileSync(a.path, `${readFileSync(a.path, 'utf8')}{"type":"tool/res`);
    const b = await st.open('big');
    expect(b.recovery.tornTail?.bytes).toBe('{"type":"tool/res'.length);
    expect(readFileSync(b.recovery.tornTail!.sidecar, 'utf8')).toBe('{"type":"tool/res');
    expect(b.recovery.repaired).toEqual(['tool/result', 'step/end', 'turn/end']);
    await b.close();
    const loaded = loadJsonl(readFileSync(a.path, 'utf8'));
    expect(loaded.warnings).toEqual([]);
    expect(loaded.eventCount).toBe(b.session.length);
  });
});
