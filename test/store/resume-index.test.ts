/**
 * The store's use of the resume index: `open` writes `resume-index.json` beside a clean log, the
 * next `open` reads through it (and grows it over what was appended), and a resumed session is
 * the one a full load gives. A stale or damaged index is never used: the open loads the file.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildResumeIndex,
  encodeEvents,
  encodeHeaderLine,
  fileStamp,
  loadJsonl,
  loadJsonlFile,
  parseResumeIndex,
  serializeResumeIndex,
  type Session,
} from '../../src/session/index.js';
import { SessionStore } from '../../src/store/index.js';
import { readLog, RESUME_INDEX_FILE, restatIndexAfterWrites } from '../../src/store/load.js';
import { tempDir } from '../cli/support/agent.js';
import { Child } from './support/proc.js';

async function turn(store: SessionStore, id: string | undefined, n: number, pad = 0): Promise<string> {
  const h = id === undefined ? await store.create({ cwd: '/w' }) : await store.open(id);
  appendTurn(h.session, n, pad);
  const id2 = h.session.id;
  await store.close();
  return id2;
}

/** A turn of `n` text deltas (each padded with `pad` x's) and an answer. */
function appendTurn(s: Session, n: number, pad = 0): void {
  const t = s.trace.lastTurn + 1;
  s.append('turn/start', { turn: t });
  s.append('step/start', { turn: t, step: 1 });
  s.append(
    'user/message',
    { id: `u${t}`, role: 'user', content: [{ type: 'text', text: `prompt ${t}` }], source: { kind: 'user' } },
    { surfaceOp: 'append' },
  );
  for (let i = 0; i < n; i++) {
    s.append('assistant/chunk', { turn: t, step: 1, chunk: { type: 'text-delta', index: 0, text: `w${i} ${'x'.repeat(pad)}` } });
  }
  s.append(
    'assistant/message',
    {
      turn: t,
      step: 1,
      message: {
        id: `a${t}`,
        role: 'assistant',
        content: [{ type: 'text', text: 'done' }],
        source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' },
      },
      usage: { inputTokens: 1, outputTokens: 1 },
    },
    { surfaceOp: 'append' },
  );
  s.append('step/end', { turn: t, step: 1 });
  s.append('turn/end', { turn: t, reason: { kind: 'completed' } });
}

/** A user message line of the log (newline included) at `seq`, `bytes` long, or longer if that is too short for one. */
function messageLine(seq: number, bytes: number): string {
  const line = (text: string): string =>
    `${JSON.stringify({
      type: 'user/message',
      seq,
      time: 5,
      data: { id: `x${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
      surfaceOp: 'append',
    })}\n`;
  return line('m'.repeat(Math.max(1, bytes - Buffer.byteLength(line('')))));
}

/** Write `text` at byte `at` of `path`, in place. */
function writeAt(path: string, at: number, text: string): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, text, at);
  } finally {
    closeSync(fd);
  }
}

/**
 * What a program writing to the log in place can do without changing its size: the first run of
 * text deltas becomes as many user messages, one a line, each as long as the line it replaces (a
 * packed row: the last one padded to the row's bytes). A full load reads the messages; an index
 * that took the prefix unread still has a run there.
 */
function runAsMessages(path: string): void {
  const bytes = readFileSync(path);
  const row = bytes.indexOf('{"type":"text-chunks"');
  if (row >= 0) {
    const end = bytes.indexOf(0x0a, row) + 1;
    const { seq0, data } = JSON.parse(bytes.toString('utf8', row, end)) as { seq0: number; data: { texts: string[] } };
    let lines = '';
    for (let i = 0; i < data.texts.length - 1; i++) lines += messageLine(seq0 + i, 0);
    lines += messageLine(seq0 + data.texts.length - 1, end - row - Buffer.byteLength(lines));
    expect(Buffer.byteLength(lines)).toBe(end - row);
    writeAt(path, row, lines);
    return;
  }
  const first = bytes.indexOf('{"type":"assistant/chunk"');
  let at = first;
  let text = '';
  while (bytes.indexOf('{"type":"assistant/chunk"', at) === at) {
    const end = bytes.indexOf(0x0a, at) + 1;
    const line = messageLine((JSON.parse(bytes.toString('utf8', at, end)) as { seq: number }).seq, end - at);
    expect(Buffer.byteLength(line)).toBe(end - at);
    text += line;
    at = end;
  }
  writeAt(path, first, text);
}

async function load(path: string, resumeIndex: boolean) {
  const fh = await open(path, 'r');
  try {
    return await readLog(fh, path, (await fh.stat()).size, { resumeIndex, clock: () => 1 });
  } finally {
    await fh.close();
  }
}

describe('the store and the resume index', () => {
  it('open writes the index, the next open reads through it and grows it, and the session is the full load’s', async () => {
    const root = tempDir('dsh-store-idx-');
    const store = new SessionStore({ root });
    const id = await turn(store, undefined, 12);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    await turn(new SessionStore({ root }), id, 12); // this open builds the index of turn 1
    const first = parseResumeIndex(readFileSync(sidecar, 'utf8'));
    expect(first).toBeDefined();
    const viaIndex = await load(path, true);
    expect(viaIndex.fromIndex).toBe(true);
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(viaIndex.session.deriveMessages().toArray()).toEqual(whole.session.deriveMessages().toArray());
    expect(viaIndex.session.events).toEqual(whole.session.events);
    await turn(new SessionStore({ root }), id, 5); // reads through the index, grows it over turn 2
    const grown = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    expect(grown.prefix.events).toBeGreaterThan(first!.prefix.events);
    expect((await load(path, true)).fromIndex).toBe(true);
    // The store without the index opens the same session.
    const plain = await new SessionStore({ root, resumeIndex: false }).open(id);
    const indexed = await load(path, true);
    expect(indexed.session.deriveMessages().toArray()).toEqual(
      plain.session.deriveMessages().toArray().slice(0, indexed.session.deriveMessages().toArray().length),
    );
    await plain.close();
  });

  it('a damaged index or a changed log is not used: the open loads the file, and writes a fresh index', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    writeFileSync(sidecar, readFileSync(sidecar, 'utf8').slice(0, 40));
    const damaged = await load(path, true);
    expect(damaged.fromIndex).toBe(false);
    expect(damaged.newIndex).toBeDefined();
    await turn(new SessionStore({ root }), id, 8); // rewrites the index
    expect((await load(path, true)).fromIndex).toBe(true);
    // A delta's letter changed in place (same size): the digest no longer matches.
    const text = readFileSync(path, 'utf8');
    const at = text.indexOf('w1 ', text.indexOf('\n'));
    expect(at).toBeGreaterThan(0);
    writeFileSync(path, `${text.slice(0, at)}W${text.slice(at + 1)}`);
    const changed = await load(path, true);
    expect(changed.fromIndex).toBe(false);
    expect(
      changed.session.events.some((e) => e.type === 'assistant/chunk' && (e.data as { chunk: { text?: string } }).chunk.text === 'W1 '),
    ).toBe(true);
  });

  it('a session resumed, appended to and closed gets its index restamped: the next resume takes the prefix unread', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8); // builds the index at open, appends turn 2, closes
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    const index = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    const st = statSync(path, { bigint: true });
    expect(index.file).toEqual({ ino: String(st.ino), size: Number(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) });
    expect(index.prefix.bytes).toBeLessThan(Number(st.size)); // turn 2 is the tail, loaded as a full load reads it
    const next = await load(path, true);
    expect(next.prefixCheckedBy).toBe('stat');
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(next.session.events).toEqual(whole.session.events);
    // Opened through the index and closed with no turn (only the open's end-of-seed marker): the
    // index grown over turn 2 is written at the close (the open leaves it for then).
    const before = statSync(path).size;
    await (await new SessionStore({ root }).open(id)).close();
    const closed = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    expect(closed.prefix.bytes).toBe(before);
    expect(closed.prefix.digests.length).toBe(index.prefix.digests.length + 1);
    // Appended by something that is not the store (no restamp): the prefix is read for its digests.
    appendFileSync(path, '');
    const later = new Date(Date.now() + 5_000);
    utimesSync(path, later, later);
    const after = await load(path, true);
    expect(after.fromIndex).toBe(true);
    expect(after.prefixCheckedBy).toBe('digests');
  });

  it('a writer killed before its close leaves the stat unrecorded: the next resume checks the digests and loads the file', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    // A real process resumes it through the index and appends turns until it is killed.
    const child = new Child(['append', root, id, '5', '0']);
    await child.waitFor('durable ');
    child.proc.kill('SIGKILL');
    await child.exited;
    const after = await load(path, true);
    expect(after.fromIndex).toBe(true);
    expect(after.prefixCheckedBy).toBe('digests');
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(after.session.events).toEqual(whole.session.events);
    expect(after.eventCount).toBeGreaterThan(parseResumeIndex(readFileSync(join(dirname(path), RESUME_INDEX_FILE), 'utf8'))!.prefix.events);
  });

  it('restatIndexAfterWrites writes an index left unwritten even when the stat did not change, and no other unchanged one', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 4);
    await turn(new SessionStore({ root }), id, 4);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    const index = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    rmSync(sidecar);
    restatIndexAfterWrites(path, index, false, index.file);
    expect(existsSync(sidecar)).toBe(false);
    restatIndexAfterWrites(path, index, true, index.file);
    expect(parseResumeIndex(readFileSync(sidecar, 'utf8'))).toEqual(index);
  });

  it('a log edited in place while a writer holds it is not restamped at close: the next resume is the full load’s', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 6, 200);
    await turn(new SessionStore({ root }), id, 6, 200); // builds the index at open
    const store = new SessionStore({ root });
    const h = await store.open(id); // through the index
    runAsMessages(h.path); // another program rewrites prefix bytes in place, same size
    appendTurn(h.session, 3);
    await store.close();
    const after = await load(h.path, true);
    const whole = loadJsonl(readFileSync(h.path), { file: h.path, clock: () => 1 });
    expect(whole.session.events.filter((e) => e.type === 'user/message').length).toBe(3 + 6);
    expect(after.session.deriveMessages().toArray()).toEqual(whole.session.deriveMessages().toArray());
    expect(after.session.events).toEqual(whole.session.events);
    expect(after.prefixCheckedBy).not.toBe('stat');
  });

  it('an index is not built over bytes that changed while the full load read them', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 6, 200);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const made = loadJsonlFile(path, { file: path });
    writeFileSync(path, encodeHeaderLine(made.header) + encodeEvents(made.session.events, { pack: false })); // a delta a line
    const fd = openSync(path, 'r');
    const before = fileStamp(fd);
    closeSync(fd);
    const loaded = loadJsonlFile(path, { file: path, clock: () => 1 });
    runAsMessages(path); // written between the load and the index's own read of the file
    expect(buildResumeIndex(path, loaded, before)).toBeUndefined();
    // What such an index would resume to: the run the load saw, not the messages the file now holds.
    writeFileSync(join(dirname(path), RESUME_INDEX_FILE), serializeResumeIndex(buildResumeIndex(path, loaded)!));
    const through = await load(path, true);
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(whole.session.events.filter((e) => e.type === 'user/message').length).toBe(1 + 6);
    expect(through.fromIndex).toBe(true);
    expect(through.session.deriveMessages().toArray()).not.toEqual(whole.session.deriveMessages().toArray());
  });

  it('a writer ended by exit restamps in its exit hook, unless another program wrote to the log while it ran', async () => {
    for (const edit of [false, true]) {
      const root = tempDir('dsh-store-idx-');
      const id = await turn(new SessionStore({ root }), undefined, 6, 200);
      await turn(new SessionStore({ root }), id, 6, 200); // builds the index at open, restamps it at close
      const path = (await new SessionStore({ root }).inspect(id)).path;
      const child = new Child(['open-exit', root, id]);
      await child.waitFor('opened');
      if (edit) runAsMessages(path);
      child.send('go');
      expect((await child.exited).code).toBe(0);
      const after = await load(path, true);
      const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
      expect(whole.session.events.some((e) => e.type === 'session/title')).toBe(true); // written by the exit hook
      expect(after.session.deriveMessages().toArray()).toEqual(whole.session.deriveMessages().toArray());
      expect(after.session.events).toEqual(whole.session.events);
      if (edit) expect(after.prefixCheckedBy).not.toBe('stat');
      else expect(after.prefixCheckedBy).toBe('stat');
    }
  });

  it('a FIFO or a link to /dev/zero in the index’s place is not read: the open loads the log and replaces it', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 4);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    const planted: [string, () => void][] = [
      ['a FIFO', () => execFileSync('mkfifo', [sidecar])],
      ['a link to /dev/zero', () => symlinkSync('/dev/zero', sidecar)],
    ];
    for (const [what, plant] of planted) {
      rmSync(sidecar, { force: true });
      plant();
      // In another process: on the old code the open blocks on the FIFO (or reads /dev/zero without end).
      const child = new Child(['open-close', root, id]);
      const opened = await child.waitFor('opened', 15_000).catch((e: unknown) => e);
      if (typeof opened !== 'string') await child.kill();
      expect(opened, what).toBe('opened');
      expect(statSync(sidecar).isFile(), what).toBe(true); // the load's index replaced it
      expect(parseResumeIndex(readFileSync(sidecar))).toBeDefined();
    }
    // And in this process, with a FIFO at this process's temp name: the index is still written.
    rmSync(sidecar);
    execFileSync('mkfifo', [`${sidecar}.${process.pid}.tmp`]);
    await (await new SessionStore({ root }).open(id)).close();
    expect(parseResumeIndex(readFileSync(sidecar))).toBeDefined();
  });
});
