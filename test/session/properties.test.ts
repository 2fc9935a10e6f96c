/**
 * Properties over generated VALID sessions (issue 2 item 8): derivation is deterministic,
 * incremental derivation equals cold derivation after every operation, non-surface events never
 * change history, seq is contiguous, re-seeding and JSONL encode→load reproduce the log exactly,
 * and packing then decoding is the identity on any event list.
 *
 * The generator is a list of abstract operations; an interpreter that keeps its own model of the
 * turn/step/call state turns each into the appends a real harness would make (or skips it when it
 * does not apply), so every generated session is valid by construction. An independent reference
 * projection (below) is the oracle for the history.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deriveMessagesFrom,
  encodeJsonl,
  expandRow,
  interruptedTurnClosers,
  isChunkRun,
  loadJsonl,
  packChunkRuns,
  Session,
  SessionError,
  type RowTag,
  type SessionEvent,
} from '../../src/session/index.js';
import type { ContentBlock, Message, MessageHistory } from '../../src/model/index.js';
import { assistantMsg, toolResultMsg, userMsg } from './helpers.js';

// ---------------------------------------------------------------------------------------------
// Operations

type Op =
  | { k: 'turnStart' }
  | { k: 'stepStart' }
  | { k: 'user'; text: string }
  | { k: 'chunks'; kind: 'text' | 'reasoning' | 'tool'; texts: string[]; dts: number[]; index: number; names: boolean[] }
  | { k: 'assistant'; text: string; calls: number; empty: boolean; sources: 'chunks' | 'empty' | 'absent'; usage: boolean }
  | { k: 'toolCall' }
  | { k: 'toolResult'; text: string; notStarted: boolean }
  | { k: 'stepEnd' }
  | { k: 'turnEnd'; reason: number }
  | { k: 'plugin'; text: string }
  | { k: 'requestHeader'; model: string }
  | { k: 'replaceSpan'; a: number; b: number; extra: boolean }
  | { k: 'replaceTool'; pick: number; text: string }
  | { k: 'replaceAssistant'; pick: number }
  | { k: 'clock'; dt: number }
  | { k: 'bad'; which: number };

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 4 }));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Op>({ k: 'turnStart' }) },
  { weight: 4, arbitrary: fc.constant<Op>({ k: 'stepStart' }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('user' as const), text }) },
  {
    weight: 5,
    arbitrary: fc.integer({ min: 0, max: 7 }).chain((n) =>
      fc.record({
        k: fc.constant('chunks' as const),
        kind: fc.constantFrom('text' as const, 'reasoning' as const, 'tool' as const),
        texts: fc.array(text, { minLength: n, maxLength: n }),
        dts: fc.array(fc.integer({ min: -3, max: 6 }), { minLength: n, maxLength: n }),
        index: fc.integer({ min: 0, max: 1 }),
        names: fc.oneof(
          fc.constant(new Array<boolean>(n).fill(true)),
          fc.constant(new Array<boolean>(n).fill(false)),
          fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        ),
      }),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('assistant' as const),
      text,
      calls: fc.integer({ min: 0, max: 3 }),
      empty: fc.boolean(),
      sources: fc.constantFrom('chunks' as const, 'empty' as const, 'absent' as const),
      usage: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.constant<Op>({ k: 'toolCall' }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('toolResult' as const), text, notStarted: fc.boolean() }) },
  { weight: 3, arbitrary: fc.constant<Op>({ k: 'stepEnd' }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('turnEnd' as const), reason: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('plugin' as const), text }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('requestHeader' as const), model: fc.constantFrom('m1', 'm2') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('replaceSpan' as const), a: fc.nat(50), b: fc.nat(50), extra: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('replaceTool' as const), pick: fc.nat(50), text }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('replaceAssistant' as const), pick: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('clock' as const), dt: fc.integer({ min: -1000, max: 100_000 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('bad' as const), which: fc.nat(7) }) },
);
const opsArb = fc.array(opArb, { minLength: 1, maxLength: 70, size: 'large' });

// ---------------------------------------------------------------------------------------------
// The interpreter: a model of the harness state, independent of the session's own trace.

const REASONS = [
  { kind: 'completed' },
  { kind: 'aborted', reason: { kind: 'user' } },
  { kind: 'blocked' },
  { kind: 'error', error: { message: 'boom', code: 'SERVER' } },
  { kind: 'max-tokens' },
  { kind: 'interrupted' },
] as const;

class Driver {
  s: Session;
  private time = 1_755_000_000_000;
  private turn: number | undefined;
  private lastTurn = 0;
  private step: number | undefined;
  private lastStep = 0;
  private stepChunks: number[] = [];
  private blocks: string[] = []; // tool-call block ids of the step, in order
  private called = new Map<string, number>();
  private answered = new Set<string>();
  private ids = 0;

  constructor() {
    this.s = Session.create({ id: 'prop', clock: () => this.time, onListenerError: () => {} });
  }

  /** Continue in a fork of the session at its end (between turns only), as a resumed child would. */
  forkHere(): void {
    this.s = this.s.fork(undefined, { clock: () => this.time, onListenerError: () => {} });
  }

  private tick(dt = 1): void {
    this.time += dt;
  }
  private id(prefix: string): string {
    return `${prefix}-${++this.ids}`;
  }

  private ensureTurn(): void {
    if (this.turn !== undefined) return;
    this.turn = ++this.lastTurn;
    this.lastStep = 0;
    this.s.append('turn/start', { turn: this.turn });
  }
  private ensureStep(): void {
    this.ensureTurn();
    if (this.step !== undefined) return;
    this.step = ++this.lastStep;
    this.stepChunks = [];
    this.blocks = [];
    this.called.clear();
    this.answered.clear();
    this.s.append('step/start', { turn: this.turn!, step: this.step! });
  }

  /** Apply one operation; returns the number of events it appended. */
  run(op: Op): number {
    const s = this.s;
    const before = s.length;
    this.tick();
    switch (op.k) {
      case 'turnStart':
        if (this.turn !== undefined) break;
        this.turn = ++this.lastTurn;
        this.lastStep = 0;
        s.append('turn/start', { turn: this.turn });
        break;
      case 'stepStart':
        if (this.step !== undefined) this.run({ k: 'stepEnd' });
        this.ensureStep();
        break;
      case 'user':
        s.append('user/message', userMsg(this.id('u'), op.text), { surfaceOp: 'append' });
        break;
      case 'chunks': {
        this.ensureStep();
        const callId = this.id('stream');
        for (let i = 0; i < op.texts.length; i++) {
          this.tick(op.dts[i]);
          const t = op.texts[i]!;
          const chunk =
            op.kind === 'tool'
              ? op.names[i]
                ? { type: 'tool-call-delta' as const, index: op.index, id: callId, name: 'bash', argumentsDelta: t }
                : { type: 'tool-call-delta' as const, index: op.index, id: callId, argumentsDelta: t }
              : { type: op.kind === 'text' ? ('text-delta' as const) : ('reasoning-delta' as const), index: op.index, text: t };
          this.stepChunks.push(s.append('assistant/chunk', { turn: this.turn!, step: this.step!, chunk }).seq);
        }
        break;
      }
      case 'assistant': {
        this.ensureStep();
        const content: ContentBlock[] = [];
        if (!op.empty) {
          content.push({ type: 'text', text: op.text });
          for (let i = 0; i < op.calls; i++) {
            const id = this.id('call');
            this.blocks.push(id);
            content.push({ type: 'tool-call', id, name: 'bash', arguments: '{}' });
          }
        }
        const data = {
          turn: this.turn!,
          step: this.step!,
          message: assistantMsg(this.id('a'), content),
          ...(op.usage ? { usage: { inputTokens: 10, outputTokens: 2 } } : {}),
        };
        if (op.sources === 'empty') s.append('assistant/message', data, { surfaceOp: 'append', sourceEventSeqs: [] });
        else if (op.sources === 'chunks' && this.stepChunks.length > 0)
          s.append('assistant/message', data, { surfaceOp: 'append', sourceEventSeqs: [...this.stepChunks] });
        else s.append('assistant/message', data, { surfaceOp: 'append' });
        break;
      }
      case 'toolCall': {
        this.ensureStep();
        if (!this.blocks.some((b) => !this.called.has(b) && !this.answered.has(b)))
          this.run({ k: 'assistant', text: 'calling', calls: 2, empty: false, sources: 'absent', usage: true });
        const id = this.blocks.find((b) => !this.called.has(b) && !this.answered.has(b))!;
        this.called.set(id, s.append('tool/call', { turn: this.turn!, step: this.step!, callId: id, name: 'bash', arguments: '{}' }).seq);
        break;
      }
      case 'toolResult': {
        this.ensureStep();
        if (op.notStarted) {
          if (!this.blocks.some((b) => !this.called.has(b) && !this.answered.has(b)))
            this.run({ k: 'assistant', text: 'calling', calls: 1, empty: false, sources: 'empty', usage: false });
          const id = this.blocks.find((b) => !this.called.has(b) && !this.answered.has(b))!;
          this.answered.add(id);
          s.append(
            'tool/result',
            {
              turn: this.turn!,
              step: this.step!,
              message: toolResultMsg(this.id('r'), id, op.text),
              error: { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' },
            },
            { surfaceOp: 'append' },
          );
        } else {
          if (![...this.called.keys()].some((b) => !this.answered.has(b))) this.run({ k: 'toolCall' });
          const id = [...this.called.keys()].find((b) => !this.answered.has(b))!;
          this.answered.add(id);
          s.append(
            'tool/result',
            { turn: this.turn!, step: this.step!, message: toolResultMsg(this.id('r'), id, op.text) },
            { surfaceOp: 'append', sourceEventSeqs: [this.called.get(id)!] },
          );
        }
        break;
      }
      case 'stepEnd':
        if (this.step === undefined) break;
        s.append('step/end', { turn: this.turn!, step: this.step! });
        this.step = undefined;
        break;
      case 'turnEnd':
        if (this.turn === undefined) break;
        if (this.step !== undefined) this.run({ k: 'stepEnd' });
        s.append('turn/end', { turn: this.turn, reason: REASONS[op.reason]! as never });
        this.turn = undefined;
        break;
      case 'plugin':
        s.append('session/title', { title: op.text, messageSeqs: [], source: { kind: 'fallback' } });
        break;
      case 'requestHeader':
        this.ensureTurn();
        s.append('request/header', { header: { config: { provider: 'p', model: op.model } }, reason: 'change' });
        break;
      case 'replaceSpan': {
        const nodes = s.surface.nodes;
        if (nodes.length === 0) break;
        const i = op.a % nodes.length;
        const j = i + (op.b % (nodes.length - i));
        const shadowed = nodes.slice(i, j + 1);
        const sources = op.extra && !shadowed.includes(0) ? [0, ...shadowed] : [...shadowed];
        s.append('user/message', userMsg(this.id('summary'), 'summary'), {
          surfaceOp: { op: 'replace', start: nodes[i]!, end: nodes[j]! },
          sourceEventSeqs: sources,
        });
        break;
      }
      case 'replaceTool': {
        this.ensureTurn();
        const results = s.surface.nodes.filter((n) => s.at(n)!.type === 'tool/result');
        if (results.length === 0) break;
        const target = s.at(results[op.pick % results.length]!) as SessionEvent<'tool/result'>;
        const d = target.data;
        const block = d.message.content[0];
        const data = {
          ...d,
          message: {
            ...d.message,
            content: [{ ...block, content: [{ type: 'text' as const, text: op.text }] }] as typeof d.message.content,
          },
        };
        s.append('tool/result', data, { surfaceOp: { op: 'replace', start: target.seq, end: target.seq }, sourceEventSeqs: [target.seq] });
        break;
      }
      case 'replaceAssistant': {
        this.ensureStep();
        const nodes = s.surface.nodes.filter((n) => s.at(n)!.type === 'assistant/message');
        if (nodes.length === 0) break;
        const seq = nodes[op.pick % nodes.length]!;
        s.append(
          'assistant/message',
          { turn: this.turn!, step: this.step!, message: assistantMsg(this.id('ra'), [{ type: 'text', text: 'rewritten' }]) },
          { surfaceOp: { op: 'replace', start: seq, end: seq }, sourceEventSeqs: [seq] },
        );
        break;
      }
      case 'clock':
        this.tick(op.dt);
        break;
      case 'bad':
        this.bad(op.which);
        break;
    }
    return s.length - before;
  }

  /** An append that is invalid in every state: it must throw and change nothing. */
  private bad(which: number): void {
    const s = this.s;
    const events = s.events;
    const messages = s.deriveMessages();
    const surface = s.surface;
    const trace = JSON.stringify(s.trace);
    const attempts: (() => unknown)[] = [
      () => s.append('turn/start', { turn: this.lastTurn + 2 }),
      () => (s.append as (t: string, d: unknown, o?: unknown) => unknown)('user/message', userMsg('x')),
      () => s.append('step/end', { turn: this.turn ?? 1, step: 99 }),
      () =>
        s.append(
          'tool/result',
          { turn: this.turn ?? 1, step: this.step ?? 1, message: toolResultMsg('r', 'no-such-call') },
          { surfaceOp: 'append' },
        ),
      () => s.append('user/message', userMsg('x'), { surfaceOp: { op: 'replace', start: 1e6, end: 1e6 }, sourceEventSeqs: [0] }),
      () => s.append('session/title', { title: NaN } as never),
      () => s.append('user/message', userMsg('x'), { surfaceOp: 'append', sourceEventSeqs: [s.length] }),
      () => s.append('assistant/chunk', { turn: 999, step: 1, chunk: { type: 'text-delta', index: 0, text: '' } }),
    ];
    expect(attempts[which]!).toThrow(SessionError);
    expect(s.events).toBe(events);
    expect(s.deriveMessages()).toBe(messages);
    expect(s.surface).toBe(surface);
    expect(JSON.stringify(s.trace)).toBe(trace);
  }

  get openTurn(): boolean {
    return this.turn !== undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The oracle: an independent fold of the surface and projection.

function referenceDerive(events: readonly SessionEvent[]): Message[] {
  let nodes: number[] = [];
  for (const e of events) {
    const op = (e as { surfaceOp?: unknown }).surfaceOp as 'append' | { start: number; end: number } | undefined;
    if (op === undefined) continue;
    if (op === 'append') nodes.push(e.seq);
    else {
      const i = nodes.indexOf(op.start);
      const j = nodes.indexOf(op.end);
      nodes = [...nodes.slice(0, i), e.seq, ...nodes.slice(j + 1)];
    }
  }
  const out: Message[] = [];
  for (const seq of nodes) {
    const e = events[seq]!;
    if (e.type === 'user/message') out.push(e.data);
    else if (e.type === 'assistant/message') {
      if (e.data.message.content.length > 0) out.push(e.data.message);
    } else if (e.type === 'tool/result') out.push(e.data.message);
  }
  return out;
}

const SURFACE = new Set(['user/message', 'assistant/message', 'tool/result']);

function runAll(ops: Op[], check?: (d: Driver, op: Op, added: number) => void, start?: (d: Driver) => void): Driver {
  const d = new Driver();
  start?.(d);
  for (const op of ops) {
    const added = d.run(op);
    check?.(d, op, added);
  }
  return d;
}

function contiguous(events: readonly SessionEvent[]): boolean {
  for (let i = 0; i < events.length; i++) if (events[i]!.seq !== i) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------

describe('properties of valid sessions', () => {
  it.skipIf(!process.env.DSH_PROP_STATS)('generator statistics', () => {
    const counts: Record<string, number[]> = {};
    for (const ops of fc.sample(opsArb, { numRuns: 300, seed: 1 })) {
      const s = runAll(ops).s;
      const by: Record<string, number> = {
        events: s.length,
        replaces: s.surface.replaceGeneration,
        messages: s.deriveMessages().length,
        turns: s.trace.lastTurn,
      };
      for (const e of s.events) by[e.type] = (by[e.type] ?? 0) + 1;
      for (const [k, v] of Object.entries(by)) (counts[k] ??= []).push(v);
    }
    for (const [k, v] of Object.entries(counts))
      console.log(k.padEnd(20), 'mean', (v.reduce((a, b) => a + b, 0) / 300).toFixed(1), 'nonzero', v.filter((x) => x > 0).length);
  });

  // Non-surface events never change history; seq stays contiguous.
  const incrementalName =
    'incremental derivation equals cold derivation and the reference after every operation, across forks; ' +
    'every snapshot keeps what it held';
  it(incrementalName, () => {
    fc.assert(
      fc.property(opsArb, fc.array(fc.boolean(), { maxLength: 70 }), (ops, forks) => {
        let prev: MessageHistory | undefined;
        // Every snapshot handed out, with a copy of what it held then: later appends, replaces
        // and forks must not change it (snapshots share their list with the live history).
        const held: [MessageHistory, Message[]][] = [];
        const first = (d: Driver): void => {
          prev = d.s.deriveMessages();
        };
        let i = 0;
        runAll(
          ops,
          (d, _op, added) => {
            const s = d.s;
            const events = s.events;
            const incremental = s.deriveMessages();
            expect(incremental.toArray()).toEqual(deriveMessagesFrom(events));
            expect(incremental.toArray()).toEqual(referenceDerive(events));
            const appended = events.slice(events.length - added);
            if (appended.every((e) => !SURFACE.has(e.type))) expect(incremental).toBe(prev);
            expect(contiguous(events)).toBe(true);
            expect(s.seq).toBe(events.length);
            held.push([incremental, incremental.toArray()]);
            for (const [h, was] of held) {
              expect(h.length).toBe(was.length);
              for (let k = 0; k < was.length; k++) if (h.at(k) !== was[k]) throw new Error(`snapshot changed at ${k}`);
            }
            prev = incremental;
            if (forks[i++] && !d.openTurn) {
              d.forkHere();
              prev = d.s.deriveMessages();
              expect(prev.toArray()).toEqual(referenceDerive(d.s.events));
            }
          },
          first,
        );
      }),
      { numRuns: 150 },
    );
  });

  it('incremental derivation catches up correctly when consulted only now and then', () => {
    fc.assert(
      fc.property(opsArb, fc.array(fc.boolean(), { minLength: 70, maxLength: 70 }), (ops, consult) => {
        let i = 0;
        const d = runAll(ops, (dr) => {
          if (consult[i++]) expect(dr.s.deriveMessages().toArray()).toEqual(referenceDerive(dr.s.events));
        });
        expect(d.s.deriveMessages().toArray()).toEqual(referenceDerive(d.s.events));
      }),
      { numRuns: 120 },
    );
  });

  it('the log and its derivation are deterministic', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const a = runAll(ops).s;
        const b = runAll(ops).s;
        expect(JSON.stringify(b.events)).toBe(JSON.stringify(a.events));
        expect(b.deriveMessages().toArray()).toEqual(a.deriveMessages().toArray());
        expect(deriveMessagesFrom(a.events)).toEqual(deriveMessagesFrom(a.events));
      }),
      { numRuns: 60 },
    );
  });

  it('a re-seeded log has identical events and identical derived messages', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const s = runAll(ops).s;
        const seeded = Session.create({ seed: JSON.parse(JSON.stringify(s.events)) as unknown[] });
        expect(JSON.stringify(seeded.events.slice(0, s.length))).toBe(JSON.stringify(s.events));
        expect(seeded.events.length).toBe(s.length + 1);
        expect(seeded.deriveMessages().toArray()).toEqual(s.deriveMessages().toArray());
        expect(seeded.surface).toEqual(s.surface);
        expect(seeded.trace).toEqual(s.trace);
      }),
      { numRuns: 100 },
    );
  });

  it('JSONL encode → load gives identical events and history (a dangling turn is closed by repair)', () => {
    fc.assert(
      fc.property(opsArb, fc.boolean(), (ops, pack) => {
        const d = runAll(ops);
        const s = d.s;
        const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events, { pack });
        const loaded = loadJsonl(text);
        expect(loaded.warnings.filter((w) => w.code !== 'OPEN_TURN')).toEqual([]);
        expect(loaded.eventCount).toBe(s.length);
        const l = loaded.session;
        expect(JSON.stringify(l.events.slice(0, s.length))).toBe(JSON.stringify(s.events));
        if (d.openTurn) {
          const closers = interruptedTurnClosers(s.events);
          expect(loaded.repaired).toEqual(closers);
          expect(l.deriveMessages().toArray()).toEqual(referenceDerive(l.events));
          expect(l.trace.openTurn).toBeUndefined();
        } else {
          expect(loaded.repaired).toEqual([]);
          expect(l.deriveMessages().toArray()).toEqual(s.deriveMessages().toArray());
        }
        // Writing the loaded events again gives the same bytes.
        expect(encodeJsonl(loaded.header, l.events.slice(0, s.length), { pack })).toBe(text);
        // Random access and suffix reads see the same events (chunk runs are stored compactly).
        for (let seq = 0; seq < s.length; seq += 7) expect(JSON.stringify(l.at(seq))).toBe(JSON.stringify(s.at(seq)));
        const from = Math.floor(s.length / 3);
        expect(JSON.stringify([...l.since(from)].slice(0, s.length - from))).toBe(JSON.stringify(s.events.slice(from)));
        // A loaded session forks like the original at every between-turn seq.
        if (!d.openTurn && s.length > 0) {
          const child = l.fork(s.length - 1);
          expect(JSON.stringify(child.events.slice(0, s.length))).toBe(JSON.stringify(s.events));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('messageCount, countOfType and recordsBack equal a recount over the events, live and loaded (packed runs too)', () => {
    let replaced = 0;
    let runs = 0;
    fc.assert(
      fc.property(opsArb, fc.boolean(), (ops, pack) => {
        const s = runAll(ops).s;
        const l = loadJsonl(encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events, { pack })).session;
        if (s.surface.replaceGeneration > 0) replaced++;
        for (const log of [s, l]) {
          const events = log.events;
          // The message count is the length of the history, as the reference projection builds it.
          expect(log.messageCount()).toBe(referenceDerive(events).length);
          for (const type of ['turn/start', 'step/start', 'assistant/message', 'tool/result', 'session/end-seed'] as const)
            expect(log.countOfType(type), type).toBe(events.filter((e) => e.type === type).length);
          // recordsBack(seq): the records starting at or before seq, last first.
          const records = [...log.records()];
          runs += records.filter((r) => isChunkRun(r)).length;
          const first = (r: (typeof records)[number]): number => (isChunkRun(r) ? r.seq0 : r.seq);
          for (const seq of [undefined, -1, 0, Math.floor(log.length / 2), log.length - 1, log.length + 3]) {
            const want = records.filter((r) => seq === undefined || first(r) <= seq).reverse();
            const got = [...log.recordsBack(seq)];
            expect(got.length, `recordsBack(${seq})`).toBe(want.length);
            got.forEach((r, i) => expect(r, `recordsBack(${seq}) #${i}`).toBe(want[i]));
          }
        }
      }),
      { numRuns: 150 },
    );
    // Else the fallback (a replaced surface) and the run records went unexercised.
    expect(replaced).toBeGreaterThan(10);
    expect(runs).toBeGreaterThan(20);
  });

  it('fork succeeds exactly at between-turn seqs, and the child starts from that prefix', () => {
    fc.assert(
      fc.property(opsArb, fc.nat(), (ops, pick) => {
        const s = runAll(ops).s;
        if (s.length === 0) return;
        const b = pick % s.length;
        // Independently: is a turn open after event b?
        let open = false;
        for (let i = 0; i <= b; i++) {
          const t = s.events[i]!.type;
          if (t === 'turn/start') open = true;
          else if (t === 'turn/end') open = false;
        }
        if (open) {
          let code: unknown;
          try {
            s.fork(b);
          } catch (e) {
            code = (e as SessionError).code;
          }
          expect(code).toBe('OPEN_TURN');
          return;
        }
        const child = s.fork(b);
        expect(child.events.slice(0, b + 1)).toEqual(s.events.slice(0, b + 1));
        expect(child.deriveMessages().toArray()).toEqual(referenceDerive(s.events.slice(0, b + 1)));
        expect(child.header.seedLength).toBe(b + 1);
      }),
      { numRuns: 100 },
    );
  });

  it('a file cut anywhere loads (as a torn tail) or is refused as corrupt, never crashes', () => {
    fc.assert(
      fc.property(opsArb, fc.double({ min: 0, max: 1, noNaN: true }), (ops, where) => {
        const s = runAll(ops).s;
        const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
        const cut = text.slice(0, Math.floor(text.length * where));
        const headerLength = text.indexOf('\n');
        let loaded;
        try {
          loaded = loadJsonl(cut);
        } catch (e) {
          expect(e).toBeInstanceOf(SessionError);
          // Only a cut inside the header line can be refused: any other cut leaves one torn
          // last line with nothing after it.
          expect(cut.length).toBeLessThan(headerLength);
          return;
        }
        // A torn tail exactly when the cut leaves a partial last line that is not JSON.
        const tail = cut.slice(cut.lastIndexOf('\n') + 1);
        let parses = true;
        try {
          JSON.parse(tail);
        } catch {
          parses = false;
        }
        expect(loaded.tornTail !== undefined).toBe(cut.length > headerLength && tail.length > 0 && !parses);
        expect(JSON.stringify(loaded.session.events.slice(0, loaded.eventCount))).toBe(
          JSON.stringify(s.events.slice(0, loaded.eventCount)),
        );
        expect(loaded.session.trace.openTurn).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Packing on arbitrary event lists (not only valid sessions)

const chunkArb = fc.record({
  kind: fc.constantFrom('text-delta', 'reasoning-delta', 'tool-call-delta', 'usage', 'other'),
  index: fc.integer({ min: 0, max: 1 }),
  id: fc.constantFrom('a', 'b'),
  name: fc.constantFrom(undefined, 'bash', 'read'),
  text,
  turn: fc.integer({ min: 1, max: 2 }),
  step: fc.integer({ min: 1, max: 2 }),
  dt: fc.integer({ min: -5, max: 50 }),
  ignorable: fc.boolean(),
});

type ChunkSpec = {
  kind: string;
  index: number;
  id: string;
  name: string | undefined;
  text: string;
  turn: number;
  step: number;
  dt: number;
  ignorable: boolean;
};

function buildEvents(specs: ChunkSpec[]): SessionEvent[] {
  let time = 1_000;
  return specs.map((c, seq) => {
    time += c.dt;
    let chunk: Record<string, unknown>;
    if (c.kind === 'tool-call-delta')
      chunk =
        c.name === undefined
          ? { type: c.kind, index: c.index, id: c.id, argumentsDelta: c.text }
          : { type: c.kind, index: c.index, id: c.id, name: c.name, argumentsDelta: c.text };
    else if (c.kind === 'usage') chunk = { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } };
    else if (c.kind === 'other') return { type: 'session/title', seq, time, data: { title: c.text } } as unknown as SessionEvent;
    else chunk = { type: c.kind, index: c.index, text: c.text };
    const e: Record<string, unknown> = { type: 'assistant/chunk', seq, time, data: { turn: c.turn, step: c.step, chunk } };
    if (c.ignorable && c.dt === 0) e.ignorable = true;
    return e as unknown as SessionEvent;
  });
}

function decodeRecords(records: readonly unknown[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const r of JSON.parse(JSON.stringify(records)) as Record<string, unknown>[]) {
    if (r.type === 'text-chunks' || r.type === 'reasoning-chunks' || r.type === 'tool-call-chunks') expandRow(r, r.type as RowTag, out);
    else out.push(r as unknown as SessionEvent);
  }
  return out;
}

describe('packing', () => {
  it('packing then decoding is the identity on any event list, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(chunkArb, { maxLength: 60 }), (specs) => {
        const events = buildEvents(specs);
        const records = packChunkRuns(events);
        expect(JSON.stringify(decodeRecords(records))).toBe(JSON.stringify(events));
        // Every row holds at least three members; everything else passes through.
        for (const r of records) {
          const d = (r as { data: { texts?: unknown[]; args?: unknown[] } }).data;
          if ('seq0' in r) expect((d.texts ?? d.args)!.length).toBeGreaterThanOrEqual(3);
        }
      }),
      { numRuns: 300 },
    );
  });
  it('and on generated sessions', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const s = runAll(ops).s;
        expect(JSON.stringify(decodeRecords(packChunkRuns(s.events)))).toBe(JSON.stringify(s.events));
      }),
      { numRuns: 100 },
    );
  });
});
