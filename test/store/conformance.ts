/**
 * The store conformance suite: what every `Store` implementation must do, through the interface
 * alone (src/store/interface.ts). It runs against the JSONL store (conformance-jsonl.test.ts)
 * and the PostgreSQL store (test/postgres/conformance.test.ts).
 *
 * "Another process" is another store instance over the same storage: it shares nothing in memory
 * with the writer. What a store holds is read back through such an instance's `inspect`, with
 * `repair: false`, so the check sees the stored events and nothing the loader adds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { createAgent, ScriptedAdapter, textResponse, toolCallResponse } from '../../src/index.js';
import { encodeHeaderLine, Session, SessionError, stringifyJson, type SessionEvent } from '../../src/session/index.js';
import { persist, type StoreError, type OpenSession, type Store } from '../../src/store/index.js';
import { appendTurn, fixedClock } from './support/events.js';

declare module '../../src/session/events.js' {
  interface SessionEventMap {
    /** Conformance-only plugin events: any JSON, logged ignorable or not. */
    'conformance/note': { k: number; v: unknown };
    'myplugin/note': { n: number };
  }
}

export interface StoreOptions {
  clock?: () => number;
  knownTypes?: ReadonlySet<string>;
}

/** Fresh, empty storage for one test, and a maker of stores over it (each like another process). */
export type Backing = (opts?: StoreOptions) => Store;

export interface Backend {
  fresh(): Promise<Backing>;
}

async function expectCode(
  p: Promise<unknown> | (() => unknown),
  code: string,
): Promise<Error & { code: string; details?: Record<string, unknown> }> {
  let caught: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected an error with code ${code}`).toBeInstanceOf(Error);
  expect((caught as { code?: unknown }).code, (caught as Error).message).toBe(code);
  return caught as Error & { code: string };
}

/** Each event as the exact JSON text a store must give back. */
const texts = (events: readonly SessionEvent[]): string[] => events.map((e) => stringifyJson(e));

export function storeConformance(name: string, backend: Backend | undefined, skipReason?: string): void {
  const suite = backend ? describe : describe.skip;
  suite(`store conformance: ${name}${backend ? '' : ` (skipped: ${skipReason ?? 'no backend'})`}`, () => {
    const made: Store[] = [];
    let backing: Backing;
    /** A store over this test's storage; closed after the test. */
    const store = (opts: StoreOptions = {}): Store => {
      const s = backing({ clock: fixedClock(), ...opts });
      made.push(s);
      return s;
    };
    const fresh = async (): Promise<void> => {
      backing = await backend!.fresh();
    };
    afterEach(async () => {
      for (const s of made.splice(0).reverse()) await s.close();
    });
    /** What the store holds for `id`, read by another store: the stored events only. */
    const stored = async (id: string): Promise<{ header: Record<string, unknown>; events: SessionEvent[] }> => {
      const view = await store().inspect(id, { repair: false });
      return { header: { ...view.header }, events: view.session.events.slice(0, view.eventCount) };
    };

    describe('create', () => {
      it('publishes the header; another store sees the session, empty', async () => {
        await fresh();
        const a = await store().create({
          cwd: '/home/me/repo',
          id: 'abc',
          header: { agentPreset: 'p', origin: 'subagent', delegationDepth: 1 },
        });
        expect(a.id).toBe('abc');
        expect(a.session.header).toMatchObject({
          id: 'abc',
          cwd: '/home/me/repo',
          agentPreset: 'p',
          origin: 'subagent',
          delegationDepth: 1,
          version: 0,
        });
        const s = await stored('abc');
        expect(s.header).toEqual({ ...a.session.header });
        expect(s.events).toEqual([]);
        await a.close();
      });

      it('mints an id when none is given', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w' });
        expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
        expect((await stored(a.id)).events).toEqual([]);
        await a.close();
      });

      it('refuses an id that exists (any cwd) and overwrites nothing', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'dup', header: { agentPreset: 'first' } });
        appendTurn(a.session);
        await a.close();
        const before = await stored('dup');
        await expectCode(store().create({ cwd: '/w', id: 'dup' }), 'SESSION_EXISTS');
        await expectCode(store().create({ cwd: '/elsewhere', id: 'dup' }), 'SESSION_EXISTS');
        const after = await stored('dup');
        expect(after.header).toEqual(before.header);
        expect(texts(after.events)).toEqual(texts(before.events));
      });

      it('needs a cwd', async () => {
        await fresh();
        await expectCode(store().create({ cwd: '' }), 'INVALID_ARGUMENT');
      });
    });

    describe('writing', () => {
      it('every committed event reaches the store in order; flush reports the durable seq', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'f' });
        appendTurn(a.session, { deltas: 40 });
        appendTurn(a.session, { deltas: 3 });
        const n = a.session.length;
        expect(await a.flush()).toMatchObject({ ok: true, durableSeq: n });
        expect(a.durableSeq).toBe(n);
        expect(texts((await stored('f')).events)).toEqual(texts(a.session.events));
        await a.close();
      });

      it('a turn/end is made durable without a flush', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'te' });
        appendTurn(a.session);
        const n = a.session.length;
        for (let i = 0; i < 200 && a.durableSeq < n; i++) await new Promise((r) => setTimeout(r, 10));
        expect(a.durableSeq).toBe(n);
        await a.close();
      });

      it('refuses appends once closed, so nothing commits without reaching the store', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'c' });
        a.session.append('turn/start', { turn: 1 });
        expect(await a.close()).toMatchObject({ ok: true, durableSeq: 1 });
        expect(a.closed).toBe(true);
        expect(() => a.session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })).toThrow(
          expect.objectContaining({ code: 'CLOSED' }),
        );
        expect((await stored('c')).events.map((e) => e.type)).toEqual(['turn/start']);
        expect(await a.close()).toMatchObject({ ok: true });
      });

      it('gives every event back byte for byte (any JSON a log may hold)', async () => {
        await fresh();
        const json = fc.letrec((tie) => ({
          value: fc.oneof(
            { depthSize: 'small' },
            fc.string({ unit: 'binary' }),
            fc.integer(),
            fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
            fc.boolean(),
            fc.constant(null),
            fc.array(tie('value'), { maxLength: 4 }),
            fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), tie('value'), { maxKeys: 4 }),
          ),
        })).value;
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'bytes' });
        let k = 0;
        await fc.assert(
          fc.asyncProperty(fc.array(json, { minLength: 1, maxLength: 8 }), async (values) => {
            for (const v of values) a.session.append('conformance/note', { k: k++, v }, { ignorable: true });
            expect((await a.flush()).ok).toBe(true);
          }),
          { numRuns: 25 },
        );
        await a.close();
        const back = await stored('bytes');
        expect(back.events.length).toBe(a.session.length);
        expect(texts(back.events)).toEqual(texts(a.session.events));
      });
    });

    describe('open', () => {
      it('resumes a closed session: same events, then one seed marker, then new events', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'r' });
        appendTurn(a.session);
        const first = texts(a.session.events);
        await a.close();
        const b = await store().open('r');
        expect(b.recovery.repaired).toEqual([]);
        expect(texts(b.session.events.slice(0, first.length))).toEqual(first);
        expect(b.session.at(first.length)?.type).toBe('session/end-seed');
        expect(b.session.trace.lastTurn).toBe(1);
        appendTurn(b.session);
        await b.close();
        const back = await stored('r');
        expect(texts(back.events)).toEqual(texts(b.session.events));
        expect(back.events.filter((e) => e.type === 'session/end-seed')).toHaveLength(1);
        expect(back.events.map((e) => e.seq)).toEqual(back.events.map((_, i) => i));
      });

      it('SESSION_NOT_FOUND for an unknown id, and for a known id under another cwd', async () => {
        await fresh();
        await expectCode(store().open('nope'), 'SESSION_NOT_FOUND');
        await expectCode(store().inspect('nope'), 'SESSION_NOT_FOUND');
        const a = await store().create({ cwd: '/w', id: 'here' });
        await a.close();
        await expectCode(store().open('here', { cwd: '/elsewhere' }), 'SESSION_NOT_FOUND');
        await (await store().open('here', { cwd: '/w' })).close();
      });

      it('one writer: SESSION_LOCKED names the live holder, in this store and another; free after close', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'l' });
        const err = await expectCode(store().open('l'), 'SESSION_LOCKED');
        expect((err as StoreError).details.holder).toMatchObject({ pid: process.pid });
        expect(err.message).toContain(`pid ${process.pid}`);
        await expectCode(st.open('l'), 'SESSION_LOCKED');
        await a.close();
        const b = await store().open('l');
        await b.close();
      });

      it('closes a turn left open and persists the closers and the seed marker', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'o' });
        // Stop right after tool/call: the call may have run.
        appendTurn(a.session, { stopAfter: 3 + 5 + 2 });
        await a.close();
        const b = await store().open('o');
        expect(b.recovery.repaired).toEqual(['tool/result', 'step/end', 'turn/end']);
        expect(b.warnings.map((w) => w.code)).toContain('OPEN_TURN');
        expect(b.durableSeq).toBe(b.session.length);
        await b.close();
        const back = await stored('o');
        expect(back.events.slice(-4).map((e) => e.type)).toEqual(['tool/result', 'step/end', 'turn/end', 'session/end-seed']);
        const result = back.events[back.events.length - 4] as SessionEvent<'tool/result'>;
        expect(result.data.error?.code).toBe('TOOL_OUTCOME_UNKNOWN');
        // Loaded again, every turn is closed: nothing more to repair.
        const again = await store().inspect('o');
        expect(again.repaired).toEqual([]);
        expect(again.warnings).toEqual([]);
      });

      it('refuses a log with an unknown event type unless the reader owns it', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'plug' });
        a.session.append('myplugin/note', { n: 1 });
        await a.close();
        await expectCode(store().open('plug'), 'FORMAT_UNSUPPORTED');
        const b = await store({ knownTypes: new Set(['myplugin/note']) }).open('plug');
        expect(b.session.at(0)?.type).toBe('myplugin/note');
        await b.close();
      });
    });

    describe('inspect', () => {
      it('reads without the lock and writes nothing; repair only in memory, or not at all', async () => {
        await fresh();
        const a = await store().create({ cwd: '/w', id: 'i' });
        appendTurn(a.session, { stopAfter: 4 });
        await a.flush();
        const view = await store().inspect('i'); // while `a` holds it
        expect(view.eventCount).toBe(4);
        expect(view.repaired.map((d) => d.type)).toEqual(['step/end', 'turn/end']);
        expect(view.location).toEqual(expect.any(String));
        const raw = await store().inspect('i', { repair: false });
        expect(raw.repaired).toEqual([]);
        expect(raw.session.trace.openTurn).toBe(1);
        expect((await stored('i')).events).toHaveLength(4);
        await a.close();
      });
    });

    describe('list', () => {
      it('lists headers newest first, with the live holder', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'a', header: { createdAt: 1000 } });
        await a.close();
        const b = await st.create({ cwd: '/v', id: 'b', header: { createdAt: 2000 } });
        const { sessions, problems } = await store().list();
        expect(problems).toEqual([]);
        expect(sessions.map((x) => [x.id, x.header.cwd, x.header.createdAt])).toEqual([
          ['b', '/v', 2000],
          ['a', '/w', 1000],
        ]);
        expect(sessions[0]!.lockedBy?.pid).toBe(process.pid);
        expect(sessions[1]!.lockedBy).toBeUndefined();
        expect(sessions.every((x) => typeof x.location === 'string' && Number.isFinite(x.modifiedMs))).toBe(true);
        await b.close();
        expect((await store().list()).sessions.every((x) => x.lockedBy === undefined)).toBe(true);
      });

      it('is empty for empty storage', async () => {
        await fresh();
        expect(await store().list()).toEqual({ sessions: [], problems: [] });
      });
    });

    describe('fork', () => {
      it('seeds a child with the prefix through the boundary; header says where it came from', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'parent' });
        appendTurn(a.session);
        const boundary = a.session.length - 1;
        appendTurn(a.session);
        await a.close();
        const child = await st.fork('parent', boundary, { id: 'child' });
        expect(child.session.header).toMatchObject({ id: 'child', parentSession: 'parent', seedLength: boundary + 1, cwd: '/w' });
        appendTurn(child.session);
        await child.close();
        const parent = await stored('parent');
        const back = await stored('child');
        expect(back.header).toMatchObject({ id: 'child', parentSession: 'parent', seedLength: boundary + 1 });
        expect(texts(back.events.slice(0, boundary + 1))).toEqual(texts(parent.events.slice(0, boundary + 1)));
        expect(back.events[boundary + 1]!.type).toBe('session/end-seed');
        expect(texts(back.events)).toEqual(texts(child.session.events));
        const reopened = await store().open('child');
        expect(reopened.session.header.seedLength).toBe(boundary + 1);
        expect(reopened.session.trace.lastTurn).toBe(2);
        await reopened.close();
        await expectCode(st.fork('parent', boundary, { id: 'child' }), 'SESSION_EXISTS');
        await expectCode(st.fork('parent', 10_000, { id: 'far' }), 'INVALID_BOUNDARY');
        await expectCode(st.fork('nope', undefined, { id: 'x' }), 'SESSION_NOT_FOUND');
      });

      it('forks of forks read through every ancestor, and the parent going on does not change the child', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'g0' });
        appendTurn(a.session);
        const b0 = a.session.length - 1;
        const c1 = await st.fork('g0', b0, { id: 'g1' }); // the live parent, open in this store
        appendTurn(a.session); // the parent goes on after the fork
        await a.close();
        appendTurn(c1.session);
        const b1 = c1.session.length - 1;
        await c1.close();
        const c2 = await store().fork('g1', b1, { id: 'g2' });
        appendTurn(c2.session);
        await c2.close();
        const g1 = await stored('g1');
        const g2 = await stored('g2');
        expect(texts(g2.events.slice(0, b1 + 1))).toEqual(texts(g1.events.slice(0, b1 + 1)));
        expect(texts(g2.events)).toEqual(texts(c2.session.events));
        expect(g2.header).toMatchObject({ parentSession: 'g1', seedLength: b1 + 1 });
        const open = await store().open('g2');
        expect(open.session.trace.lastTurn).toBe(3);
        await open.close();
      });

      it("from a session another writer holds mid-turn: the seed is the parent's stored events, never closers", async () => {
        await fresh();
        const p = await store().create({ cwd: '/w', id: 'parent' });
        appendTurn(p.session);
        const between = p.session.length - 1;
        appendTurn(p.session, { stopAfter: 6 });
        await p.flush();
        const other = store();
        await expectCode(other.fork('parent', undefined, { id: 'mid' }), 'OPEN_TURN');
        const child = await other.fork('parent', between, { id: 'child' });
        await child.close();
        const parentNow = await stored('parent');
        const back = await stored('child');
        expect(texts(back.events.slice(0, between + 1))).toEqual(texts(parentNow.events.slice(0, between + 1)));
        expect(back.events.slice(between + 1).map((e) => e.type)).toEqual(['session/end-seed']);
        // The parent finishes its turn; a fork of its end inherits exactly what it wrote.
        const t = p.session.trace;
        p.session.append('step/end', { turn: t.openTurn!, step: t.openStep! });
        p.session.append('turn/end', { turn: t.openTurn!, reason: { kind: 'completed' } });
        await p.close();
        const whole = await other.fork('parent', undefined, { id: 'whole' });
        await whole.close();
        const all = await stored('parent');
        const inherited = await stored('whole');
        expect(texts(inherited.events.slice(0, all.events.length))).toEqual(texts(all.events));
        expect(inherited.events.slice(all.events.length).map((e) => e.type)).toEqual(['session/end-seed']);
      });
    });

    describe('importLog', () => {
      it('publishes a whole session exactly as given, a turn left open included; never over an existing id', async () => {
        await fresh();
        const src = Session.create({ id: 'imp', header: { cwd: '/w', agentPreset: 'x' }, clock: fixedClock() });
        appendTurn(src);
        appendTurn(src, { stopAfter: 9 });
        const info = await store().importLog({ header: src.header, events: src.events });
        expect(info).toMatchObject({ id: 'imp', header: { id: 'imp', cwd: '/w' } });
        const back = await stored('imp');
        expect(encodeHeaderLine(back.header as never)).toBe(encodeHeaderLine(src.header));
        expect(texts(back.events)).toEqual(texts(src.events));
        await expectCode(store().importLog({ header: src.header, events: [] }), 'SESSION_EXISTS');
        expect(texts((await stored('imp')).events)).toEqual(texts(src.events));
        // Nobody holds an imported session; opening it repairs the open turn as for any other.
        const h = await store().open('imp');
        expect(h.recovery.repaired).toEqual(['tool/result', 'step/end', 'turn/end']);
        await h.close();
      });

      it('a fork imported after its parent reads the same; invalid events are refused and nothing is created', async () => {
        await fresh();
        const parent = Session.create({ id: 'ip', header: { cwd: '/w' }, clock: fixedClock() });
        appendTurn(parent);
        const child = parent.fork(parent.length - 1, { id: 'ic' });
        appendTurn(child);
        await store().importLog({ header: parent.header, events: parent.events });
        await store().importLog({ header: child.header, events: child.events });
        expect(texts((await stored('ic')).events)).toEqual(texts(child.events));
        expect((await stored('ic')).header).toMatchObject({ parentSession: 'ip', seedLength: parent.length });
        const bad = [
          ...parent.events.slice(0, 2),
          { type: 'turn/end', seq: 2, time: 1, data: { turn: 7, reason: { kind: 'completed' } } },
        ] as unknown as SessionEvent[];
        await expect(store().importLog({ header: { ...parent.header, id: 'bad' }, events: bad })).rejects.toBeInstanceOf(SessionError);
        await expectCode(
          store().importLog({
            header: { ...parent.header, id: 'alien' },
            events: [{ type: 'newer/thing', seq: 0, time: 1, data: {} } as unknown as SessionEvent],
          }),
          'FORMAT_UNSUPPORTED',
        );
        expect((await store().list()).sessions.map((x) => x.id).sort()).toEqual(['ic', 'ip']);
      });
    });

    describe('handles', () => {
      it('handle() finds what this store opened, and only that', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'h' });
        expect(st.handle('h')).toBe(a);
        expect(st.handle(a.session)).toBe(a);
        expect(store().handle('h')).toBeUndefined();
        await a.close();
        expect(st.handle('h')).toBeUndefined();
      });

      it('store.close closes every open session and refuses new work', async () => {
        await fresh();
        const st = store();
        const a = await st.create({ cwd: '/w', id: 'x1' });
        const b = await st.create({ cwd: '/w', id: 'x2' });
        appendTurn(a.session);
        expect((await st.close()).map((r) => r.ok)).toEqual([true, true]);
        expect(a.closed && b.closed).toBe(true);
        await expectCode(st.open('x1'), 'CLOSED');
        await (await store().open('x1')).close(); // the lock went with the close
        expect(texts((await stored('x1')).events).slice(0, a.session.length)).toEqual(texts(a.session.events));
      });
    });

    describe('under the agent (persist)', () => {
      it('the prompt is durable before the model call and the tool/call before the tool body', async () => {
        await fresh();
        const st = store();
        const h: OpenSession = await st.create({ cwd: '/tmp/project', id: 'agent' });
        const durableTypes = async (): Promise<string[]> => (await stored('agent')).events.map((e) => e.type);
        const seen: { model?: string[]; tool?: string[] } = {};
        const model = new ScriptedAdapter([
          async () => {
            seen.model = await durableTypes();
            return toolCallResponse([{ id: 'call_1', name: 'probe', args: {} }]);
          },
          textResponse('done'),
        ]);
        const agent = createAgent({
          model: 'scripted:demo',
          adapters: model,
          session: h.session,
          plugins: [persist(st)],
          tools: [
            {
              name: 'probe',
              description: 'looks at the store',
              parameters: z.object({}),
              execute: async () => {
                seen.tool = await durableTypes();
                return 'ok';
              },
            },
          ],
        });
        agent.prompt('go');
        await agent.whenIdle();
        expect(seen.model).toContain('user/message');
        expect(seen.tool?.at(-1)).toBe('tool/call');
        await h.close();
        expect(texts((await stored('agent')).events)).toEqual(texts(agent.session.events));
        await agent.dispose();
      });

      it('persist refuses an agent whose session is not open in the store', async () => {
        await fresh();
        expect(() => createAgent({ model: 'scripted:demo', adapters: new ScriptedAdapter([]), plugins: [persist(store())] })).toThrow(
          expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
        );
      });
    });
  });
}
