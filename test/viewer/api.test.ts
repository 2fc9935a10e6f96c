/**
 * The viewer's server and JSON API, over the bundled example log. Expected values come from the
 * log itself (its lines parsed one by one) and from the session library (`deriveMessagesFrom`),
 * never from the viewer's own code.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveMessagesFrom, loadJsonl } from '../../src/session/index.js';
import { SessionStore, StoreError } from '../../src/store/index.js';
import { startViewer, ViewerError, type Viewer } from '../../src/viewer/index.js';
import { repoRoot } from '../support/shared.js';
import { UNSAFE_CHAR_CLASS, unsafeCharsModule } from '../../src/model/unsafe-chars.js';
import { json, parts, raw } from './support/http.js';
import { countEvents, eventLines, turnFacts, LogWriter } from './support/logs.js';

const EXAMPLE = join(repoRoot, 'examples', 'fix-typo.jsonl');
const lines = eventLines(EXAMPLE);
const facts = turnFacts(lines);
const loaded = loadJsonl(readFileSync(EXAMPLE, 'utf8'), { repair: false });
const events = loaded.session.events.slice(0, loaded.eventCount);

let viewer: Viewer;
let port: number;
let base: string;

beforeAll(async () => {
  viewer = await startViewer({ source: EXAMPLE });
  ({ port, base } = parts(viewer.url));
});
afterAll(async () => {
  await viewer.close();
});

describe('binding and access', () => {
  it('listens on 127.0.0.1 only, at a URL carrying a long random token', async () => {
    const u = new URL(viewer.url);
    expect(u.hostname).toBe('127.0.0.1');
    expect(viewer.host).toBe('127.0.0.1');
    const token = u.pathname.split('/')[1]!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // Another address of the loopback range is not served: the socket is bound to 127.0.0.1 alone.
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.2', port }, () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('refuses a non-loopback host unless explicitly allowed, before opening anything', async () => {
    for (const host of ['0.0.0.0', '192.168.1.10', '::', 'example.com']) {
      const e = await startViewer({ source: EXAMPLE, host }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ViewerError);
      expect((e as ViewerError).code).toBe('HOST_NOT_ALLOWED');
    }
  });

  it('serves nothing without the token', async () => {
    const token = base.slice(1, -1);
    const wrong = [
      '/',
      '/index.html',
      '/api/session',
      `/${token.slice(0, -1)}/api/session`,
      `/${token}x/api/session`,
      `/${token.toUpperCase()}/api/session`,
      `/${token}`,
      `//${token}/api/session`,
      `/x/${token}/api/session`,
    ];
    for (const path of wrong) {
      const r = await raw(port, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain('turn');
    }
    const other = await startViewer({ source: EXAMPLE });
    try {
      // One viewer's token opens nothing on another.
      const r = await raw(parts(other.url).port, `${base}api/session`);
      expect(r.status).toBe(404);
    } finally {
      await other.close();
    }
    expect((await raw(port, `${base}api/session`)).status).toBe(200);
  });

  it('refuses traversal and encoded paths instead of reaching the file system', async () => {
    const tries = [
      `${base}../package.json`,
      `${base}%2e%2e/package.json`,
      `${base}..%2fpackage.json`,
      `${base}%2e%2e%2f%2e%2e%2fpackage.json`,
      `${base}api/../../package.json`,
      `${base}../../src/viewer/server.ts`,
      `${base}page/app.js`,
      `${base}./app.js`,
      `${base}app.js/../index.html`,
      `${base}%61pp.js`,
      `${base}/etc/passwd`,
      `${base}..\\..\\package.json`,
      `${base}server.ts`,
      `${base}api/..%2f..%2fpackage.json`,
    ];
    for (const path of tries) {
      const r = await raw(port, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain('"devDependencies"');
      expect(r.body, path).not.toContain('startViewer');
    }
  });

  it('refuses other Host headers (DNS rebinding), cross-site requests and methods other than GET', async () => {
    expect((await raw(port, `${base}api/session`, { headers: { Host: 'evil.example' } })).status).toBe(403);
    expect((await raw(port, `${base}api/session`, { headers: { Host: `evil.example:${port}` } })).status).toBe(403);
    expect((await raw(port, `${base}api/session`, { headers: { Host: `localhost:${port}` } })).status).toBe(200);
    expect((await raw(port, `${base}api/session`, { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    expect((await raw(port, `${base}api/session`, { headers: { 'Sec-Fetch-Site': 'same-origin' } })).status).toBe(200);
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS'])
      expect((await raw(port, `${base}api/session`, { method })).status, method).toBe(405);
  });

  it('sends a strict CSP, nosniff and no CORS headers on pages, API answers and errors', async () => {
    for (const path of [base, `${base}app.js`, `${base}api/session`, `${base}api/items?from=999999`, '/nope']) {
      const r = await raw(port, path, { headers: { Origin: 'http://evil.example' } });
      const csp = String(r.headers['content-security-policy']);
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("require-trusted-types-for 'script'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(csp, path).not.toContain('unsafe-eval');
      expect(r.headers['x-content-type-options'], path).toBe('nosniff');
      expect(r.headers['access-control-allow-origin'], path).toBeUndefined();
    }
    const page = await raw(port, base);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    // No inline script in the page: scripts come from its own files only.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await raw(port, `${base}app.js`)).headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('serves the escape table the terminal uses as unsafe-chars.js (issue 12 item 5)', async () => {
    const r = await raw(port, `${base}unsafe-chars.js`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(r.body).toBe(unsafeCharsModule());
    expect(r.body).toContain(JSON.stringify(UNSAFE_CHAR_CLASS));
  });

  it('the page code never parses HTML strings', () => {
    const dir = join(repoRoot, 'src', 'viewer', 'page');
    for (const f of ['app.js', 'dom.js', 'render.js', 'timeline.js', 'model.js', 'vlist.js', 'api.js', 'format.js']) {
      // Comments may name the sinks (to say they are not used); code may not.
      const src = readFileSync(join(dir, f), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      expect(src, f).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|\beval\(|new Function/,
      );
    }
  });
});

describe('the session and its segments', () => {
  it('summarises the log', async () => {
    const s = await json(viewer.url, 'session');
    expect(s.events).toBe(countEvents(EXAMPLE));
    expect(s.turns).toBe(facts.length);
    expect(s.steps).toBe(facts.reduce((n, t) => n + t.steps, 0));
    expect(s.toolCalls).toBe(facts.reduce((n, t) => n + t.toolCalls.length, 0));
    expect(s.toolErrors).toBe(facts.reduce((n, t) => n + t.results.filter((r) => r.error).length, 0));
    expect(s.header.id).toBe(loaded.header.id);
    expect(s.follow.state).toBe('following');
    const usages = lines.filter((l) => l.type === 'assistant/message').map((l) => l.data.usage as Record<string, number>);
    expect(s.usage.output).toBe(usages.reduce((n, u) => n + u.outputTokens!, 0));
    expect(s.usage.input).toBe(usages.reduce((n, u) => n + u.inputTokens!, 0));
    expect(s.usage.cacheRead).toBe(usages.reduce((n, u) => n + (u.cacheReadTokens ?? 0), 0));
  });

  it('pages the segments; the pages put together are the whole list', async () => {
    const all = await json(viewer.url, 'segments', { from: 0, limit: 1000 });
    const turnStarts = lines.filter((l) => l.type === 'turn/start').map((l) => l.seq);
    expect(all.segments.filter((s: { kind: string }) => s.kind === 'turn').map((s: { start: number }) => s.start)).toEqual(turnStarts);
    expect(all.total).toBe(all.segments.length);
    const paged: unknown[] = [];
    for (let from = 0; from < all.total; from += 1) {
      const page = await json(viewer.url, 'segments', { from, limit: 1 });
      expect(page.segments).toHaveLength(1);
      paged.push(...page.segments);
    }
    expect(paged).toEqual(all.segments);
    const tail = await json(viewer.url, 'segments', { from: all.total, limit: 5 });
    expect(tail.segments).toEqual([]);
    // Each turn says how it ended, as its turn/end records it.
    const ends = lines.filter((l) => l.type === 'turn/end').map((l) => (l.data.reason as { kind: string }).kind);
    expect(all.segments.filter((s: { kind: string }) => s.kind === 'turn').map((s: { reason: { kind: string } }) => s.reason.kind)).toEqual(
      ends,
    );
  });

  it('rejects malformed parameters and unknown routes with typed errors', async () => {
    const bad = [
      'api/segments?from=-1',
      'api/segments?from=abc',
      'api/segments?limit=1e3',
      'api/items',
      'api/history?seq=1.5',
      'api/search?q=',
      'api/turn?segment=0x1',
    ];
    for (const p of bad) {
      const r = await raw(port, base + p);
      expect(r.status, p).toBe(400);
      expect(JSON.parse(r.body).error.code, p).toBe('BAD_REQUEST');
    }
    for (const p of [
      'api/nope',
      `api/items?from=${loaded.eventCount}`,
      'api/turn?segment=0',
      'api/turn?segment=999',
      'api/locate?seq=100000',
    ]) {
      const r = await raw(port, base + p);
      expect(r.status, p).toBe(404);
      expect(JSON.parse(r.body).error.code, p).toBe('NOT_FOUND');
    }
  });
});

describe("a turn's events", () => {
  it('lists its steps, and pairs each tool call with its result', async () => {
    const segs = (await json(viewer.url, 'segments', { limit: 1000 })).segments as { kind: string; index: number; turn: number }[];
    for (const f of facts) {
      const seg = segs.find((s) => s.kind === 'turn' && s.turn === f.turn)!;
      const t = await json(viewer.url, 'turn', { segment: seg.index });
      const steps = t.parts.filter((p: { kind: string }) => p.kind === 'step');
      expect(steps).toHaveLength(f.steps);
      const tools = steps.flatMap((p: { items: { kind: string }[] }) => p.items.filter((i) => i.kind === 'tool'));
      expect(tools.map((i: { callId: string }) => i.callId)).toEqual(f.toolCalls.map((c) => c.callId));
      for (const item of tools) {
        const call = f.toolCalls.find((c) => c.callId === item.callId)!;
        const result = f.results.find((r) => r.callId === item.callId)!;
        const callTime = lines.find((l) => l.seq === call.seq)!.time;
        expect(item.seq).toBe(call.seq);
        expect(item.name).toBe(call.name);
        expect(item.result.seq).toBe(result.seq);
        expect(item.result.durationMs).toBe(result.time - callTime);
        expect(item.result.status).toBe(result.error ? 'error' : 'ok');
        if (result.error) expect(item.result.code).toBe(result.error);
        expect(item.result.content[0].text.text).toBe(result.text);
      }
      // A paired result is not listed again on its own.
      expect(steps.flatMap((p: { items: { kind: string }[] }) => p.items).filter((i: { kind: string }) => i.kind === 'result')).toEqual([]);
      // The turn ends with its turn/end.
      expect(t.parts[t.parts.length - 1].item.kind).toBe('turn-end');
    }
  });

  it('pages a step: the pages together cover every event of the step once', async () => {
    const segs = (await json(viewer.url, 'segments', { limit: 1000 })).segments as { kind: string; index: number }[];
    const seg = segs.find((s) => s.kind === 'turn')!;
    const whole = await json(viewer.url, 'step', { segment: seg.index, step: 1, limit: 1000 });
    const seqs: number[] = [];
    let from: number | undefined;
    for (let guard = 0; guard < 100; guard++) {
      const page = await json(viewer.url, 'step', { segment: seg.index, step: 1, limit: 2, ...(from !== undefined ? { from } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seqs.push(...page.items.map((i: { seq: number }) => i.seq));
      if (page.next === undefined) break;
      from = page.next;
    }
    expect(seqs).toEqual(whole.items.map((i: { seq: number }) => i.seq));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('collapses a stream into counts, merged with the message it assembled', async () => {
    const msg = lines.find((l) => l.type === 'assistant/message')!;
    const chunkSeqs = (
      JSON.parse(
        readFileSync(EXAMPLE, 'utf8')
          .split('\n')
          .find((l) => l.includes(`"seq":${msg.seq},`))!,
      ) as { sourceEventSeqs: number[] }
    ).sourceEventSeqs;
    const page = await json(viewer.url, 'items', { from: chunkSeqs[0]!, to: msg.seq, limit: 10 });
    expect(page.items).toHaveLength(1);
    const item = page.items[0];
    expect(item.kind).toBe('assistant');
    expect(item.stream.chunks).toBe(chunkSeqs.length);
    expect([item.stream.first, item.stream.last]).toEqual([chunkSeqs[0], chunkSeqs[chunkSeqs.length - 1]]);
    expect(item.usage.output).toBe((msg.data.usage as { outputTokens: number }).outputTokens);
  });
});

describe('whole texts', () => {
  it('come one item at a time, whatever the limit asked', async () => {
    const preview = await json(viewer.url, 'items', { from: 0, limit: 50 });
    const full = await json(viewer.url, 'items', { from: 0, limit: 50, full: 1 });
    expect(preview.items.length).toBeGreaterThan(1);
    expect(full.items).toEqual(preview.items.slice(0, 1));
    expect(full.next).toBe(preview.items[1].seq);
  });
});

describe('the model view', () => {
  it('at every seq, is the history deriveMessagesFrom gives for that seq', async () => {
    for (let seq = 0; seq < loaded.eventCount; seq++) {
      const h = await json(viewer.url, 'history', { seq, limit: 1000 });
      const expected = deriveMessagesFrom(events, seq);
      expect(h.total, `seq ${seq}`).toBe(expected.length);
      expect(
        h.messages.map((m: { id: string }) => m.id),
        `seq ${seq}`,
      ).toEqual(expected.map((m) => m.id));
      expect(
        h.messages.map((m: { role: string }) => m.role),
        `seq ${seq}`,
      ).toEqual(expected.map((m) => m.role));
    }
  });

  it('pages a long history', async () => {
    const last = loaded.eventCount - 1;
    const all = await json(viewer.url, 'history', { seq: last, limit: 1000 });
    const first = await json(viewer.url, 'history', { seq: last, from: 0, limit: 3 });
    const rest = await json(viewer.url, 'history', { seq: last, from: 3, limit: 1000 });
    expect(first.messages).toHaveLength(3);
    expect([...first.messages, ...rest.messages]).toEqual(all.messages);
    expect(all.messages.map((m: { index: number }) => m.index)).toEqual(all.messages.map((_: unknown, i: number) => i));
  });
});

describe('search and locate', () => {
  it('finds a string wherever it occurs, in seq order', async () => {
    const r = await json(viewer.url, 'search', { q: 'RECIEVE' });
    const expected = lines
      .filter((l) => l.type !== 'assistant/chunk' && JSON.stringify(l.data).toLowerCase().includes('recieve'))
      .map((l) => l.seq);
    expect(expected.length).toBeGreaterThan(2);
    expect(r.matches.map((m: { seq: number }) => m.seq)).toEqual(expected);
    for (const m of r.matches) expect(m.match.toLowerCase()).toBe('recieve');
    const paged = await json(viewer.url, 'search', { q: 'recieve', limit: 1 });
    expect(paged.matches.map((m: { seq: number }) => m.seq)).toEqual(expected.slice(0, 1));
    expect(paged.next).toBe(expected[1]);
  });

  it('locates a seq in its turn and step', async () => {
    const call = facts[0]!.toolCalls[0]!;
    const r = await json(viewer.url, 'locate', { seq: call.seq });
    expect(r).toMatchObject({ seq: call.seq, type: 'tool/call', turn: 1, step: 1 });
  });
});

describe('other sources', () => {
  it('a session of a store, by id; an unknown id is the store’s SESSION_NOT_FOUND', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-viewer-store-'));
    const store = new SessionStore({ root });
    try {
      const h = await store.create({ cwd: '/tmp/viewer-store' });
      h.session.append('turn/start', { turn: 1 });
      h.session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
      const id = h.id;
      await h.close();
      const v = await startViewer({ source: { sessionId: id, store } });
      try {
        const s = await json(v.url, 'session');
        expect(s.header.id).toBe(id);
        expect(s.turns).toBe(1);
        expect(s.kind).toBe('file');
      } finally {
        await v.close();
      }
      const e = await startViewer({ source: { sessionId: 'no-such-session', store } }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).code).toBe('SESSION_NOT_FOUND');
    } finally {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a Session of this process, followed as it is appended to', async () => {
    const w = new LogWriter('in-memory');
    w.beginTurn('hello');
    const v = await startViewer({ source: w.session });
    try {
      const before = await json(v.url, 'session');
      expect(before.events).toBe(w.session.length);
      expect(before.kind).toBe('session');
      w.respond('hi there');
      w.endStep();
      w.endTurn();
      const after = await json(v.url, 'session');
      expect(after.events).toBe(w.session.length);
      const segs = await json(v.url, 'segments');
      expect(segs.segments.find((s: { kind: string }) => s.kind === 'turn').reason.kind).toBe('completed');
    } finally {
      await v.close();
    }
  });

  it('refuses what is not a source, and a missing file', async () => {
    for (const source of [42, {}, { sessionId: 'x' }, null]) {
      const e = await startViewer({ source: source as never }).catch((x: unknown) => x);
      expect((e as ViewerError).code).toBe('INVALID_SOURCE');
    }
    const e = await startViewer({ source: join(tmpdir(), 'no-such-dir-dsh', 'x.jsonl') }).catch((x: unknown) => x);
    expect((e as ViewerError).code).toBe('INVALID_SOURCE');
  });
});
