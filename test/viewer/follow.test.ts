/**
 * Following a log file as its writer appends to it: complete lines are decoded with the codec's
 * checks, an unterminated last line waits for its newline, and anything the loader would refuse
 * stops following with the reason. `poll()` is called directly, so nothing waits on a timer
 * except the one test of the server's event stream.
 */
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/session/index.js';
import { FileSource } from '../../src/viewer/source/file.js';
import { startViewer } from '../../src/viewer/index.js';
import { json } from './support/http.js';
import { LogWriter } from './support/logs.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-follow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A log whose first turn is complete and whose second is still running. */
function liveLog(): { path: string; w: LogWriter } {
  const w = new LogWriter(`live-${++n}`);
  w.beginTurn('first');
  w.header('m-1');
  w.respond('done');
  w.endStep();
  w.endTurn();
  w.beginTurn('second');
  const path = join(dir, `live-${n}.jsonl`);
  writeFileSync(path, w.text());
  return { path, w };
}

function open(path: string): { src: FileSource; batches: SessionEvent[][] } {
  const src = FileSource.open(path, { pollMs: 60_000 });
  const batches: SessionEvent[][] = [];
  src.subscribe((b) => batches.push([...b]));
  return { src, batches };
}

describe('following a log file', () => {
  it('loads a running turn as open (no crash repair) and adds what is appended', () => {
    const { path, w } = liveLog();
    const { src, batches } = open(path);
    try {
      expect(src.length()).toBe(w.session.length);
      expect(src.at(src.length() - 1).type).toBe('user/message'); // no repair closers after it
      w.respond('thinking', [{ id: 'c1', name: 'read', args: '{"path":"a"}' }]);
      w.tool('c1', 'read', '{"path":"a"}', 'contents');
      appendFileSync(path, w.more());
      src.poll();
      expect(src.length()).toBe(w.session.length);
      for (let s = 0; s < w.session.length; s++) expect(src.at(s)).toEqual(w.session.at(s));
      expect(batches.flat().map((e) => e.seq)).toEqual([...w.session.since(batches.flat()[0]!.seq)].map((e) => e.seq));
      expect(src.follow()).toEqual({ state: 'following' });
    } finally {
      src.close();
    }
  });

  it('holds back a line until its newline arrives (a write in progress)', () => {
    const { path, w } = liveLog();
    const { src } = open(path);
    try {
      const before = src.length();
      w.endStep();
      const line = w.more();
      const cut = Math.floor(line.length / 2);
      appendFileSync(path, line.slice(0, cut));
      src.poll();
      expect(src.length()).toBe(before);
      expect(src.follow().pendingBytes).toBe(Buffer.byteLength(line.slice(0, cut)));
      appendFileSync(path, line.slice(cut));
      src.poll();
      expect(src.length()).toBe(before + 1);
      expect(src.at(before).type).toBe('step/end');
      expect(src.follow().pendingBytes).toBeUndefined();
    } finally {
      src.close();
    }
  });

  it('starts from a log whose last line is torn, and reads it once it is complete', () => {
    const { path, w } = liveLog();
    w.endStep();
    const line = w.more();
    appendFileSync(path, line.slice(0, 10));
    const { src } = open(path);
    try {
      expect(src.warnings.map((x) => x.code)).toContain('TORN_TAIL');
      const before = src.length();
      appendFileSync(path, line.slice(10));
      src.poll();
      expect(src.length()).toBe(before + 1);
      expect(src.at(before).type).toBe('step/end');
    } finally {
      src.close();
    }
  });

  it('expands packed chunk rows appended to the file', () => {
    const { path, w } = liveLog();
    const { src } = open(path);
    try {
      w.respond('a long answer streamed in many small pieces, enough for a packed row');
      const text = w.more();
      expect(text).toContain('"text-chunks"');
      appendFileSync(path, text);
      src.poll();
      expect(src.length()).toBe(w.session.length);
      const chunks = [...src.since(0)].filter((e) => e.type === 'assistant/chunk').length;
      expect(chunks).toBe([...w.session.since(0)].filter((e) => e.type === 'assistant/chunk').length);
    } finally {
      src.close();
    }
  });

  const stops: [string, (w: LogWriter, seq: number) => string, RegExp][] = [
    ['a line that is not JSON', () => '{"type":"step/end",\n', /CORRUPT_LOG/],
    ['a seq gap', (_w, seq) => `${JSON.stringify({ type: 'step/end', seq: seq + 1, time: 1, data: { turn: 2, step: 1 } })}\n`, /SEQ_GAP/],
    [
      'a result without its call (trace rule)',
      (_w, seq) =>
        `${JSON.stringify({
          type: 'tool/result',
          seq,
          time: 1,
          data: {
            turn: 2,
            step: 1,
            message: {
              id: 'x',
              role: 'user',
              content: [{ type: 'tool-result', toolCallId: 'nope', content: [] }],
              source: { kind: 'tool', callId: 'nope' },
            },
          },
          surfaceOp: 'append',
        })}\n`,
      /TRACE_VIOLATION/,
    ],
    [
      'an invalid event shape',
      (_w, seq) => `${JSON.stringify({ type: 'step/end', seq, time: 1, data: { turn: '2', step: 1 } })}\n`,
      /INVALID_EVENT/,
    ],
    ['an unknown event type', (_w, seq) => `${JSON.stringify({ type: 'future/thing', seq, time: 1, data: {} })}\n`, /FORMAT_UNSUPPORTED/],
  ];
  for (const [what, bad, code] of stops) {
    it(`stops following at ${what}, keeping the events before it`, () => {
      const { path, w } = liveLog();
      const { src } = open(path);
      try {
        w.respond('ok');
        const good = w.more();
        appendFileSync(path, good + bad(w, w.session.length));
        src.poll();
        expect(src.length()).toBe(w.session.length);
        const f = src.follow();
        expect(f.state).toBe('stopped');
        expect(f.problem?.code).toBe('FOLLOW_STOPPED');
        expect(f.problem?.message).toMatch(code);
        // The refused line is named by its line number in the file.
        expect(f.problem?.message).toMatch(/line \d+/);
      } finally {
        src.close();
      }
    });
  }

  it('stops when the file shrinks or is replaced', () => {
    const a = liveLog();
    const one = open(a.path);
    truncateSync(a.path, 10);
    one.src.poll();
    expect(one.src.follow().problem?.message).toMatch(/shrank/);
    one.src.close();

    const b = liveLog();
    const two = open(b.path);
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, b.w.text());
    renameSync(other, b.path);
    two.src.poll();
    expect(two.src.follow().problem?.message).toMatch(/replaced/);
    two.src.close();
  });
});

describe("the server's event stream", () => {
  it('tells an open page when the log grows, and which segments changed', async () => {
    const { path, w } = liveLog();
    const v = await startViewer({ source: path, pollMs: 20 });
    try {
      const base = new URL(v.url);
      const messages: { events: number; segments: number; changed: number[] }[] = [];
      const grown = new Promise<void>((resolve, reject) => {
        const req = get({ host: '127.0.0.1', port: Number(base.port), path: `${base.pathname}api/follow` }, (res) => {
          expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
          let buf = '';
          res.on('data', (c: Buffer) => {
            buf += c.toString('utf8');
            for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const data = /^data: (.*)$/m.exec(block);
              if (!block.includes('event: grow') || !data) continue;
              messages.push(JSON.parse(data[1]!));
              if (messages.length === 1) {
                // The first message is the state on connecting: now append a turn end and a new turn.
                w.endStep();
                w.endTurn();
                w.event('session/title', { title: 'between turns' });
                appendFileSync(path, w.more());
              } else if (messages[messages.length - 1]!.events === w.session.length) {
                req.destroy();
                resolve();
              }
            }
          });
        });
        req.on('error', (e) => (messages.length > 1 ? resolve() : reject(e)));
      });
      await grown;
      const last = messages[messages.length - 1]!;
      expect(last.events).toBe(w.session.length);
      // Segments: inbox splice, turn 1, inbox splice, turn 2 (3), then the title outside any turn (4).
      expect(last.segments).toBe(5);
      expect(messages.slice(1).flatMap((m) => m.changed)).toEqual(expect.arrayContaining([3, 4]));
      const segs = await json(v.url, 'segments');
      expect(segs.segments[3]).toMatchObject({ kind: 'turn', turn: 2, reason: { kind: 'completed' } });
      expect(segs.segments[4]).toMatchObject({ kind: 'outside', events: 1 });
    } finally {
      await v.close();
    }
  });
});
