/**
 * Reading log bytes: the streamed reader (`loadJsonlFile`, `loadJsonlFd`) decodes UTF-8 across
 * 1 MiB chunk boundaries and reports, with its line, every line whose bytes are not UTF-8 (they
 * decode to U+FFFD, which would otherwise pass unnoticed); a byte-order mark before the header is
 * skipped with a warning; a line too long for a string is a typed error naming its line; the
 * words of a misplaced seq say what is wrong with it.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadJsonl, loadJsonlFd, loadJsonlFile, type LogWarning } from '../../src/session/index.js';
import { T0, assistantMsg, expectSessionError, userMsg } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-file-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, content: string | Buffer): string => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const CHUNK = 1 << 20;
const j = (v: unknown) => JSON.stringify(v);
const HEADER = j({ type: 'session', version: 0, id: 's1', createdAt: 1, cwd: '/work', delegationDepth: 0 });
const ev = (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) =>
  j({ type, seq, time: T0 + seq, data, ...extra });

/** A complete one-turn log whose user message is `text` (line 4), as bytes. */
function logWith(text: string): Buffer {
  return Buffer.from(
    [
      HEADER,
      ev('turn/start', 0, { turn: 1 }),
      ev('step/start', 1, { turn: 1, step: 1 }),
      ev('user/message', 2, userMsg('u1', text), { surfaceOp: 'append' }),
      ev(
        'assistant/message',
        3,
        { turn: 1, step: 1, message: assistantMsg('a1', [{ type: 'text', text: 'ok' }]) },
        { surfaceOp: 'append' },
      ),
      ev('step/end', 4, { turn: 1, step: 1 }),
      ev('turn/end', 5, { turn: 1, reason: { kind: 'completed' } }),
      '',
    ].join('\n'),
  );
}

/** Offset in `b` of the first byte of `needle`. */
const at = (b: Buffer, needle: string): number => {
  const i = b.indexOf(Buffer.from(needle));
  if (i < 0) throw new Error(`no ${needle}`);
  return i;
};

const utf8 = (ws: LogWarning[]) => ws.filter((w) => w.code === 'INVALID_UTF8');
const userText = (path: string): string => (loadJsonlFile(path).session.deriveMessages().toArray()[0]!.content[0] as { text: string }).text;

describe('invalid UTF-8 in a streamed log', () => {
  it('is reported with its line, and the text keeps U+FFFD where the bad bytes were', () => {
    const bytes = logWith('before MARK after');
    const m = at(bytes, 'MARK');
    bytes[m] = 0xff; // never valid in UTF-8
    const path = write('ff.jsonl', bytes);
    const loaded = loadJsonlFile(path);
    expect(utf8(loaded.warnings)).toEqual([
      {
        code: 'INVALID_UTF8',
        line: 4,
        message: 'line 4 holds bytes that are not valid UTF-8; each was read as U+FFFD (the replacement character)',
      },
    ]);
    expect(userText(path)).toBe('before \uFFFDARK after');
  });

  it('a truncated multi-byte character (the helper byte missing) is reported too', () => {
    const text = logWith('emdash HERE').toString('latin1').replace('HERE', '\u00e2\u0080'); // E2 80 without its last byte
    const path = write('trunc.jsonl', Buffer.from(text, 'latin1'));
    expect(utf8(loadJsonlFile(path).warnings).map((w) => w.line)).toEqual([4]);
  });

  it('a legitimate U+FFFD in the file (EF BF BD) is not a warning', () => {
    const path = write('fffd.jsonl', logWith('replacement \uFFFD char'));
    const loaded = loadJsonlFile(path);
    expect(utf8(loaded.warnings)).toEqual([]);
    expect(userText(path)).toBe('replacement \uFFFD char');
  });

  it('a valid character split across the 1 MiB read boundary decodes intact, with no warning', () => {
    for (const split of [1, 2, 3]) {
      // A 4-byte character (U+1F600) placed so that `split` of its bytes end the first chunk.
      const probe = logWith(`${'a'.repeat(CHUNK)}\u{1F600}tail`);
      const start = at(probe, '\u{1F600}');
      const pad = CHUNK - split - start;
      const bytes = logWith(`${'a'.repeat(CHUNK + pad)}\u{1F600}tail`);
      expect(at(bytes, '\u{1F600}') + split).toBe(CHUNK);
      const path = write(`split-${split}.jsonl`, bytes);
      const loaded = loadJsonlFile(path);
      expect(utf8(loaded.warnings), `split ${split}`).toEqual([]);
      expect(userText(path).endsWith('\u{1F600}tail')).toBe(true);
    }
  });

  it('an invalid byte just after the read boundary is placed on its line, counting the lines of the first chunk', () => {
    // Many short lines (a long user message line would not do: the newlines must be in chunk 1).
    const lines = [HEADER, ev('turn/start', 0, { turn: 1 }), ev('step/start', 1, { turn: 1, step: 1 })];
    let seq = 2;
    let size = lines.join('\n').length + 1;
    while (size < CHUNK - 200) {
      const l = ev('assistant/chunk', seq++, { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } });
      lines.push(l);
      size += l.length + 1;
    }
    const head = Buffer.from(`${lines.join('\n')}\n`);
    const filler = CHUNK - head.length;
    const bad = ev('user/message', seq, userMsg('u1', `${'b'.repeat(filler)}Z`), { surfaceOp: 'append' });
    const rest = [
      ev('step/end', seq + 1, { turn: 1, step: 1 }),
      ev('turn/end', seq + 2, { turn: 1, reason: { kind: 'completed' } }),
      '',
    ].join('\n');
    const bytes = Buffer.concat([head, Buffer.from(`${bad}\n${rest}`)]);
    const z = bytes.indexOf(Buffer.from('Z"'), CHUNK - 100);
    bytes[z] = 0x80; // a continuation byte with no lead
    expect(z).toBeGreaterThanOrEqual(CHUNK); // in the second chunk
    const path = write('boundary.jsonl', bytes);
    const loaded = loadJsonlFile(path);
    expect(utf8(loaded.warnings).map((w) => w.line)).toEqual([lines.length + 1]);
  });

  it('lists the first 20 lines and counts the rest', () => {
    const lines = [HEADER, ev('turn/start', 0, { turn: 1 }), ev('step/start', 1, { turn: 1, step: 1 })];
    for (let i = 0; i < 25; i++) lines.push(ev('user/message', 2 + i, userMsg(`u${i}`, 'BAD'), { surfaceOp: 'append' }));
    lines.push(ev('step/end', 27, { turn: 1, step: 1 }), ev('turn/end', 28, { turn: 1, reason: { kind: 'completed' } }), '');
    const bytes = Buffer.from(lines.join('\n'));
    for (let i = bytes.indexOf('BAD'); i >= 0; i = bytes.indexOf('BAD', i + 1)) bytes[i] = 0xc0; // C0 never starts a valid sequence
    const ws = utf8(loadJsonlFile(write('many.jsonl', bytes)).warnings);
    expect(ws).toHaveLength(21);
    expect(ws.slice(0, 20).map((w) => w.line)).toEqual(Array.from({ length: 20 }, (_, i) => 4 + i));
    expect(ws[20]!.message).toBe('5 more line(s) hold bytes that are not valid UTF-8');
  });

  it('a character cut by a crash in the torn tail is reported with the tail, not as invalid UTF-8', () => {
    const whole = logWith('x');
    const cut = Buffer.concat([whole, Buffer.from(ev('turn/start', 6, { turn: 2 }).slice(0, 20)), Buffer.from([0xe2, 0x80])]);
    const loaded = loadJsonlFile(write('torn.jsonl', cut));
    expect(loaded.tornTail?.line).toBe(8);
    expect(utf8(loaded.warnings)).toEqual([]);
  });

  it('loadJsonlFd reads an open descriptor the same way, and leaves it open', () => {
    const bytes = logWith('fd MARK');
    bytes[at(bytes, 'MARK')] = 0xff;
    const path = write('fd.jsonl', bytes);
    const fd = openSync(path, 'r');
    try {
      const loaded = loadJsonlFd(fd, { file: 'piped' });
      expect(utf8(loaded.warnings).map((w) => w.line)).toEqual([4]);
      expect(loaded.session.deriveMessages().toArray()).toHaveLength(2);
    } finally {
      closeSync(fd); // throws if the loader had closed it
    }
  });

  it('inspectHead sees the first bytes before anything is decoded, and can refuse them', () => {
    const path = write('inspect.jsonl', logWith('x'));
    const seen: Buffer[] = [];
    loadJsonlFile(path, { inspectHead: (b) => void seen.push(Buffer.from(b)) });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.subarray(0, HEADER.length).toString()).toBe(HEADER);
    expect(() =>
      loadJsonlFile(path, {
        inspectHead: () => {
          throw new Error('refused');
        },
      }),
    ).toThrow('refused');
  });
});

describe('a byte-order mark before the header', () => {
  it('is skipped with a warning on line 1, streamed or from text; the log loads as without it', () => {
    const plain = logWith('bom');
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), plain]);
    const path = write('bom.jsonl', withBom);
    for (const loaded of [loadJsonlFile(path), loadJsonl(withBom.toString('utf8'))]) {
      expect(loaded.warnings.filter((w) => w.code === 'BYTE_ORDER_MARK')).toEqual([
        {
          code: 'BYTE_ORDER_MARK',
          line: 1,
          message: 'line 1 starts with a UTF-8 byte-order mark (U+FEFF), which dsh never writes; it was skipped',
        },
      ]);
      expect(loaded.session.deriveMessages().toArray()).toEqual(loadJsonl(plain.toString('utf8')).session.deriveMessages().toArray());
    }
  });
  it('only before the header: one on a later line is still not JSON there', () => {
    const lines = logWith('x').toString('utf8').split('\n');
    lines[2] = `\uFEFF${lines[2]}`;
    const err = expectSessionError(() => loadJsonl(lines.join('\n'), { file: 'f.jsonl' }), 'CORRUPT_LOG');
    expect(err.details.line).toBe(3);
  });
});

describe('a misplaced seq, in words', () => {
  const lines = (): string[] => logWith('x').toString('utf8').split('\n');
  const error = (ls: string[]) => expectSessionError(() => loadJsonl(ls.join('\n'), { file: 'f.jsonl' }), 'CORRUPT_LOG').message;
  it('a repeated line says the seq repeats', () => {
    const ls = lines();
    ls.splice(3, 0, ls[2]!); // seq 1 twice
    expect(error(ls)).toBe(
      'f.jsonl:4: corrupt session log: seq 1 repeats or goes back (seq 1 was already read; seq 2 belongs here); a later line (8) ' +
        'records a turn/end, so this is inside the committed region',
    );
  });
  it('a gap names the missing seqs', () => {
    const ls = lines();
    ls.splice(2, 2); // seqs 1 and 2 gone
    expect(error(ls)).toContain('f.jsonl:3: corrupt session log: seq gap: expected 1, got 3 (seqs 1–2 are missing)');
    const one = lines();
    one.splice(2, 1);
    expect(error(one)).toContain('seq gap: expected 1, got 2 (seq 1 is missing)');
  });
  it('a line without a seq, and a second header, say so', () => {
    const ls = lines();
    ls[2] = j({ type: 'step/start', time: T0, data: { turn: 1, step: 1 } });
    expect(error(ls)).toContain('f.jsonl:3: corrupt session log: the line has no seq (seq 1 belongs here)');
    const twice = lines();
    twice.splice(2, 0, HEADER);
    expect(error(twice)).toContain(
      'f.jsonl:3: corrupt session log: a second session header (only line 1 may hold one; seq 1 belongs here)',
    );
    const str = lines();
    str[2] = j({ type: 'step/start', seq: '1', time: T0, data: { turn: 1, step: 1 } });
    expect(error(str)).toContain('seq "1" is not a non-negative integer (seq 1 belongs here)');
  });
  it('a defective line that is itself the last turn/end says the line itself is committed', () => {
    const ls = lines();
    ls[6] = ev('turn/end', 9, { turn: 1, reason: { kind: 'completed' } }); // line 7, where seq 5 belongs
    expect(error(ls)).toBe(
      'f.jsonl:7: corrupt session log: seq gap: expected 5, got 9 (seqs 5–8 are missing); the line itself records a turn/end, so ' +
        'it is inside the committed region',
    );
  });
});
