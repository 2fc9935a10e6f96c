/**
 * Compact storage of loaded chunk runs, and streaming loads from a file. A loaded log keeps its
 * chunk runs packed; every public read must still see the exact events the file holds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deriveMessagesFrom, encodeJsonl, loadJsonl, loadJsonlFile, SessionError, type SessionEvent } from '../../src/session/index.js';
import { expectSessionError, fullTurn, newSession, openStep, userMsg } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A closed two-turn log whose steps stream long runs of text, reasoning and tool-call deltas. */
function streamed() {
  const s = newSession();
  for (let turn = 1; turn <= 2; turn++) {
    openStep(s, turn);
    s.append('user/message', userMsg(`u${turn}`), { surfaceOp: 'append' });
    const seqs: number[] = [];
    for (let i = 0; i < 6; i++)
      seqs.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: `r${i}` } }).seq);
    for (let i = 0; i < 10; i++)
      seqs.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 1, text: `t${i} ` } }).seq);
    seqs.push(
      s.append('assistant/chunk', {
        turn,
        step: 1,
        chunk: { type: 'tool-call-delta', index: 2, id: `c${turn}`, name: 'bash', argumentsDelta: '{' },
      }).seq,
    );
    for (let i = 0; i < 4; i++)
      seqs.push(
        s.append('assistant/chunk', {
          turn,
          step: 1,
          chunk: { type: 'tool-call-delta', index: 2, id: `c${turn}`, argumentsDelta: `"a${i}"` },
        }).seq,
      );
    s.append(
      'assistant/message',
      {
        turn,
        step: 1,
        message: {
          id: `a${turn}`,
          role: 'assistant',
          content: [{ type: 'text', text: 'done' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
      },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
    s.append('step/end', { turn, step: 1 });
    s.append('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return s;
}

describe('a loaded log with packed runs', () => {
  const orig = streamed();
  const text = encodeJsonl({ ...orig.header, delegationDepth: 0 }, orig.events);
  const json = (v: unknown) => JSON.stringify(v);

  it('reads back every event exactly, by at(), since() and events', () => {
    const l = loadJsonl(text).session;
    expect(l.length).toBe(orig.length + 1);
    for (let seq = 0; seq < orig.length; seq++) expect(json(l.at(seq))).toBe(json(orig.at(seq)));
    expect(l.at(-1)).toBeUndefined();
    expect(l.at(orig.length + 1)).toBeUndefined();
    expect(json([...l.since(0)].slice(0, orig.length))).toBe(json(orig.events));
    // since() may start in the middle of a run.
    expect(json([...l.since(7)].slice(0, 10))).toBe(json(orig.events.slice(7, 17)));
    expect(json(l.events.slice(0, orig.length))).toBe(json(orig.events));
    const member = l.at(8)!;
    expect(Object.isFrozen(member) && Object.isFrozen(member.data) && Object.isFrozen((member.data as { chunk: object }).chunk)).toBe(true);
  });
  it('derives, forks and appends like any session', () => {
    const l = loadJsonl(text).session;
    expect(l.deriveMessages().toArray()).toEqual(orig.deriveMessages().toArray());
    const turn1End = orig.events.findIndex((e) => e.type === 'turn/end');
    const child = l.fork(turn1End);
    expect(json(child.events.slice(0, turn1End + 1))).toBe(json(orig.events.slice(0, turn1End + 1)));
    expect(child.deriveMessages().toArray()).toEqual(deriveMessagesFrom(orig.events, turn1End));
    // A boundary on a run member is inside a turn.
    expect(expectSessionError(() => l.fork(8), 'OPEN_TURN').message).toContain('opened at seq 0');
    // New events after the loaded runs get the next seqs and read back.
    fullTurn(l, 3);
    expect(l.at(orig.length + 1)!.type).toBe('turn/start');
    expect(json(l.at(orig.length + 3))).toBe(json(l.events[orig.length + 3]));
    expect(l.events.every((e, i) => e.seq === i)).toBe(true);
    expect(l.deriveMessages().toArray()).toEqual(deriveMessagesFrom(l.events));
  });
  it('keeps runs of event lines compact too, and reads them back the same', () => {
    const plain = encodeJsonl({ ...orig.header, delegationDepth: 0 }, orig.events, { pack: false });
    const l = loadJsonl(plain).session;
    expect(json(l.events.slice(0, orig.length))).toBe(json(orig.events));
    expect(json([...l.since(5)].slice(0, 20))).toBe(json(orig.events.slice(5, 25)));
  });
  it('refuses a packed row whose members break a rule, naming the row line and first member', () => {
    const lines = text.split('\n');
    const i = lines.findIndex((x) => x.startsWith('{"type":"text-chunks"'));
    const row = JSON.parse(lines[i]!) as { data: { turn: number } };
    row.data.turn = 0;
    lines[i] = JSON.stringify(row);
    const err = expectSessionError(() => loadJsonl(lines.join('\n'), { file: 'f' }), 'INVALID_EVENT');
    expect(err.details).toMatchObject({ line: i + 1, path: '$.data.turn', seq: (JSON.parse(lines[i]!) as { seq0: number }).seq0 });
  });
});

describe('loadJsonlFile (streamed)', () => {
  it('loads exactly what loadJsonl loads from the same bytes', () => {
    const s = streamed();
    const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, text);
    const a = loadJsonl(text, { file: path, clock: () => 0 });
    const b = loadJsonlFile(path, { clock: () => 0 });
    expect(JSON.stringify(b.session.events)).toBe(JSON.stringify(a.session.events));
    expect(b.warnings).toEqual(a.warnings);
    expect(b.rowCount).toBe(a.rowCount);
    expect(b.lineOf(9)).toBe(a.lineOf(9));
  });
  it('decodes multi-byte characters split across read chunks', () => {
    // Lines of two- and four-byte characters across the 1 MiB read boundary; the session id is
    // padded until a character is split by it (the byte there is a UTF-8 continuation byte).
    let text = '';
    let s = newSession();
    for (let pad = 0; pad < 4; pad++) {
      s = newSession({ id: `s${'x'.repeat(pad)}` });
      openStep(s, 1);
      for (let i = 0; i < 40; i++)
        s.append('user/message', userMsg(`u${i}`, `${'é'.repeat(9_000 + i)}😀${'ж'.repeat(7_001)}`), { surfaceOp: 'append' });
      s.append('step/end', { turn: 1, step: 1 });
      s.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
      text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events).replace(/\n/g, '\r\n');
      const byte = Buffer.from(text)[1 << 20]!;
      if (byte >= 0x80 && byte < 0xc0) break;
    }
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(1 << 20);
    expect(bytes[1 << 20]! >= 0x80 && bytes[1 << 20]! < 0xc0).toBe(true);
    const path = join(dir, 'utf8.jsonl');
    writeFileSync(path, text);
    const l = loadJsonlFile(path).session;
    expect(JSON.stringify(l.events.slice(0, s.length))).toBe(JSON.stringify(s.events));
  });
  it('reports a torn tail and a missing final newline as loadJsonl does', () => {
    const s = streamed();
    const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
    for (const t of [`${text}{"type":"turn/st`, text.slice(0, -1)]) {
      const path = join(dir, 't.jsonl');
      writeFileSync(path, t);
      const a = loadJsonl(t, { file: path });
      const b = loadJsonlFile(path);
      expect(b.tornTail).toEqual(a.tornTail);
      expect(b.warnings).toEqual(a.warnings);
      expect(b.eventCount).toBe(a.eventCount);
    }
  });
  it('a line many read chunks long (a big tool result) loads exactly as from the text', () => {
    // 64 MiB on one line, CRLF-terminated: the line spans 64 reads. (Its cost is measured by
    // `npm run bench`, phase longline: it was once quadratic, ~9 s here.)
    const s = newSession();
    openStep(s, 1);
    s.append('user/message', userMsg('u1', 'x'.repeat(64 << 20)), { surfaceOp: 'append' });
    s.append('step/end', { turn: 1, step: 1 });
    s.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events).replace(/\n/g, '\r\n');
    const path = join(dir, 'long-line.jsonl');
    writeFileSync(path, text);
    const a = loadJsonl(text, { file: path, clock: () => 0 });
    const b = loadJsonlFile(path, { clock: () => 0 });
    expect(b.session.length).toBe(a.session.length);
    expect(JSON.stringify(b.session.events) === JSON.stringify(a.session.events)).toBe(true);
    expect(b.warnings).toEqual(a.warnings);
    rmSync(path);
  });
  it('names the file in errors, and refuses an empty file', () => {
    const path = join(dir, 'empty.jsonl');
    writeFileSync(path, '');
    const err = expectSessionError(() => loadJsonlFile(path), 'CORRUPT_LOG');
    expect(err.message).toContain(path);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(
      bad,
      `${JSON.stringify({ type: 'session', version: 0, id: 's', createdAt: 0, delegationDepth: 0 })}\nnot json\n` +
        `${JSON.stringify({ type: 'turn/end', seq: 0, time: 0, data: {} })}\n`,
    );
    const e2 = expectSessionError(() => loadJsonlFile(bad), 'CORRUPT_LOG');
    expect(e2.details).toMatchObject({ file: bad, line: 2 });
    expect(() => loadJsonlFile(join(dir, 'missing.jsonl'))).toThrow(/ENOENT/);
    expect(() => loadJsonlFile(join(dir, 'missing.jsonl'))).not.toThrow(SessionError);
  });
});

describe('events are the same values whether stored as objects or as runs', () => {
  it('a materialised member equals the event that was appended', () => {
    const s = streamed();
    const l = loadJsonl(encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events)).session;
    const appended = s.events.filter((e) => e.type === 'assistant/chunk') as SessionEvent[];
    const loaded = l.events.filter((e) => e.type === 'assistant/chunk');
    expect(loaded).toEqual(appended);
  });
});
