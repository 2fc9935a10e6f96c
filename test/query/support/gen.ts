/**
 * Generated sessions for the query properties: a list of abstract operations, interpreted by a
 * driver that keeps its own record of what it wrote (which calls it answered and how, which usage
 * a provider billed, which surface nodes each replace shadowed) through the real `Session` API.
 * The record is the oracle: the queries must agree with it, and it is never computed by them.
 */
import fc from 'fast-check';
import { Session } from '../../../src/session/session.js';
import type { ContentBlock, UserMessage, AssistantMessage, ToolResultMessage } from '../../../src/model/message.js';
import type { TokenUsage } from '../../../src/model/usage.js';

export type Op =
  | { k: 'turn' }
  | { k: 'step' }
  | { k: 'user'; text: string }
  | {
      k: 'attempt';
      deltas: number;
      calls: number;
      usage: boolean;
      finish: 'stop' | 'tool-calls' | 'max-tokens' | 'error';
      messageUsage: boolean;
    }
  | { k: 'call'; pick: number }
  | { k: 'hook'; decision: 'pass' | 'block' }
  | { k: 'approval'; outcome: 'allowed-once' | 'rejected' }
  | { k: 'result'; pick: number; outcome: 'ok' | 'isError' | 'error' }
  | { k: 'notStarted' }
  | { k: 'compact'; a: number; b: number }
  | { k: 'prune'; pick: number }
  | { k: 'stepEnd' }
  | { k: 'turnEnd'; reason: number }
  | { k: 'clock'; dt: number };

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Op>({ k: 'turn' }) },
  { weight: 3, arbitrary: fc.constant<Op>({ k: 'step' }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('user' as const), text: fc.string({ maxLength: 6 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('attempt' as const),
      deltas: fc.integer({ min: 0, max: 4 }),
      calls: fc.integer({ min: 0, max: 3 }),
      usage: fc.boolean(),
      finish: fc.constantFrom('stop' as const, 'tool-calls' as const, 'max-tokens' as const, 'error' as const),
      messageUsage: fc.boolean(),
    }),
  },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('call' as const), pick: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('hook' as const), decision: fc.constantFrom('pass' as const, 'block' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant('approval' as const), outcome: fc.constantFrom('allowed-once' as const, 'rejected' as const) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant('result' as const),
      pick: fc.nat(5),
      outcome: fc.constantFrom('ok' as const, 'isError' as const, 'error' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant<Op>({ k: 'notStarted' }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('compact' as const), a: fc.nat(40), b: fc.nat(40) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('prune' as const), pick: fc.nat(40) }) },
  { weight: 3, arbitrary: fc.constant<Op>({ k: 'stepEnd' }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('turnEnd' as const), reason: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('clock' as const), dt: fc.integer({ min: -500, max: 5000 }) }) },
);

export const opsArb = fc.array(opArb, { minLength: 1, maxLength: 60 });

const REASONS = [
  { kind: 'completed' },
  { kind: 'aborted', reason: { kind: 'user' } },
  { kind: 'blocked' },
  { kind: 'error', error: { message: 'boom', code: 'SERVER' } },
  { kind: 'max-tokens' },
  { kind: 'interrupted' },
] as const;

export const MODEL = { provider: 'deepseek', model: 'gen-model' };

/** What the driver wrote, as the oracle for the queries. */
export interface Record {
  /** Every billed usage, in order. */
  billed: TokenUsage[];
  /** Every tool/call: its seq, turn, step, and its result's seq (undefined: never answered). */
  calls: {
    callId: string;
    name: string;
    seq: number;
    turn: number;
    step: number;
    resultSeq?: number;
    outcome?: 'ok' | 'isError' | 'error';
  }[];
  /** Results with no call (TOOL_NOT_STARTED). */
  notStarted: { callId: string; seq: number }[];
  /** Tool-call blocks of each message (seq: the message's), `dispatched` once a tool/call or a result took them. */
  issued: { callId: string; name: string; seq: number; turn: number; step: number; dispatched: boolean }[];
  /** Replacing seq → the nodes it shadowed. */
  replaced: Map<number, number[]>;
  /** Turn number → end reason kind; absent while open. */
  turns: Map<number, string | undefined>;
  retries: number;
  /** Failed model attempts (finish error). */
  failedAttempts: number;
}

export class Driver {
  readonly s: Session;
  readonly rec: Record = {
    billed: [],
    calls: [],
    notStarted: [],
    issued: [],
    replaced: new Map(),
    turns: new Map(),
    retries: 0,
    failedAttempts: 0,
  };
  private time = 1_790_000_000_000;
  private turn: number | undefined;
  private lastTurn = 0;
  private step: number | undefined;
  private lastStep = 0;
  /** Tool-call blocks of the step's messages not yet called or answered. */
  private blocks: string[] = [];
  /** Called, unanswered calls of the step. */
  private inFlight: string[] = [];
  private ids = 0;

  constructor(id = 'gen') {
    this.s = Session.create({ id, clock: () => this.time });
  }

  private id(p: string): string {
    return `${p}-${++this.ids}`;
  }

  private ensureTurn(): void {
    if (this.turn !== undefined) return;
    this.turn = ++this.lastTurn;
    this.lastStep = 0;
    this.rec.turns.set(this.turn, undefined);
    this.s.append('turn/start', { turn: this.turn });
  }

  private ensureStep(): void {
    this.ensureTurn();
    if (this.step !== undefined) return;
    this.step = ++this.lastStep;
    this.blocks = [];
    this.inFlight = [];
    this.s.append('step/start', { turn: this.turn!, step: this.step });
    // The route of the requests (a failed attempt's model is known only from here).
    if (this.step === 1) this.s.append('request/context', MODEL);
  }

  private chunk(chunk: unknown): number {
    this.time += 1;
    return this.s.append('assistant/chunk', { turn: this.turn!, step: this.step!, chunk: chunk as never }).seq;
  }

  run(op: Op): void {
    const s = this.s;
    this.time += 3;
    switch (op.k) {
      case 'turn':
        if (this.turn === undefined) this.ensureTurn();
        return;
      case 'step':
        if (this.step !== undefined) this.run({ k: 'stepEnd' });
        this.ensureStep();
        return;
      case 'user': {
        const m: UserMessage = { id: this.id('u'), role: 'user', content: [{ type: 'text', text: op.text }], source: { kind: 'user' } };
        s.append('user/message', m, { surfaceOp: 'append' });
        return;
      }
      case 'attempt': {
        this.ensureStep();
        const seqs: number[] = [];
        const content: ContentBlock[] = [];
        let text = '';
        for (let i = 0; i < op.deltas; i++) {
          seqs.push(this.chunk({ type: 'text-delta', index: 0, text: `t${i}` }));
          text += `t${i}`;
        }
        if (text) content.push({ type: 'text', text });
        const calls: string[] = [];
        for (let c = 0; c < op.calls; c++) {
          const id = this.id('call');
          seqs.push(this.chunk({ type: 'block-start', index: c + 1, blockType: 'tool-call' }));
          seqs.push(this.chunk({ type: 'tool-call-delta', index: c + 1, id, name: 'tool' + (c % 2), argumentsDelta: '{}' }));
          seqs.push(
            this.chunk({ type: 'block-end', index: c + 1, block: { type: 'tool-call', id, name: 'tool' + (c % 2), arguments: '{}' } }),
          );
          content.push({ type: 'tool-call', id, name: 'tool' + (c % 2), arguments: '{}' });
          calls.push(id);
        }
        const usage: TokenUsage = {
          inputTokens: 100 + seqs.length,
          cacheReadTokens: 7 * op.calls,
          outputTokens: 10 + op.deltas,
          reasoningTokens: op.deltas,
        };
        if (op.usage) seqs.push(this.chunk({ type: 'usage', usage }));
        if (op.finish === 'error') {
          this.chunk({ type: 'finish', reason: { kind: 'error', failure: { message: 'overloaded', code: 'SERVER' } } });
          this.rec.failedAttempts++;
          // The provider billed the usage it reported, message or not.
          if (op.usage) this.rec.billed.push(usage);
          if (op.messageUsage) {
            this.rec.retries++;
            s.append('llm/retry', {
              retryId: this.id('r'),
              turn: this.turn!,
              step: this.step!,
              provider: MODEL.provider,
              mode: 'normal',
              policyKey: 'k',
              retry: 1,
              delayMs: 1,
              failure: { message: 'overloaded', code: 'SERVER' },
            });
          }
          return;
        }
        seqs.push(this.chunk({ type: 'finish', reason: { kind: op.finish } }));
        const message: AssistantMessage = { id: this.id('a'), role: 'assistant', content, source: { kind: 'model', ...MODEL } };
        const billed = op.messageUsage ? usage : op.usage ? usage : undefined;
        if (billed) this.rec.billed.push(billed);
        const m = s.append(
          'assistant/message',
          { turn: this.turn!, step: this.step!, message, ...(op.messageUsage ? { usage } : {}) },
          { surfaceOp: 'append', sourceEventSeqs: seqs },
        );
        this.blocks.push(...calls);
        calls.forEach((callId, c) =>
          this.rec.issued.push({ callId, name: 'tool' + (c % 2), seq: m.seq, turn: this.turn!, step: this.step!, dispatched: false }),
        );
        return;
      }
      case 'call': {
        if (this.step === undefined || this.blocks.length === 0) return;
        const id = this.blocks.splice(op.pick % this.blocks.length, 1)[0]!;
        this.rec.issued.find((b) => b.callId === id)!.dispatched = true;
        const name = `tool${Number(id.split('-')[1]) % 2}`;
        const e = s.append('tool/call', { turn: this.turn!, step: this.step, callId: id, name, arguments: '{}' });
        this.rec.calls.push({ callId: id, name, seq: e.seq, turn: this.turn!, step: this.step });
        this.inFlight.push(id);
        return;
      }
      case 'hook': {
        if (this.inFlight.length === 0) return;
        const handlerId = this.id('h');
        s.append('hook/invoked', { turn: this.turn!, point: 'PreToolUse', handlerId, matcher: '*' });
        s.append('hook/result', { turn: this.turn!, point: 'PreToolUse', handlerId, decision: op.decision, exitCode: 0, durationMs: 1 });
        return;
      }
      case 'approval': {
        if (this.inFlight.length === 0) return;
        const callId = this.inFlight[this.inFlight.length - 1]!;
        const id = this.id('ap');
        s.append('approval/asked', { id, toolName: 'tool', callId });
        s.append('approval/decided', { id, outcome: op.outcome });
        return;
      }
      case 'result': {
        if (this.inFlight.length === 0) return;
        const id = this.inFlight.splice(op.pick % this.inFlight.length, 1)[0]!;
        const call = this.rec.calls.find((c) => c.callId === id && c.turn === this.turn && c.step === this.step)!;
        const message: ToolResultMessage = {
          id: this.id('r'),
          role: 'user',
          content: [
            {
              type: 'tool-result',
              toolCallId: id,
              content: [{ type: 'text', text: 'out' }],
              ...(op.outcome === 'ok' ? {} : { isError: true }),
            },
          ],
          source: { kind: 'tool', callId: id },
        };
        const e = s.append(
          'tool/result',
          {
            turn: this.turn!,
            step: this.step!,
            message,
            ...(op.outcome === 'error' ? { error: { name: 'ToolError', code: 'E_TOOL' } } : {}),
          },
          { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
        );
        call.resultSeq = e.seq;
        call.outcome = op.outcome;
        return;
      }
      case 'notStarted': {
        if (this.step === undefined || this.blocks.length === 0) return;
        const id = this.blocks.shift()!;
        this.rec.issued.find((b) => b.callId === id)!.dispatched = true;
        const message: ToolResultMessage = {
          id: this.id('r'),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: 'not started' }], isError: true }],
          source: { kind: 'tool', callId: id },
        };
        const e = s.append(
          'tool/result',
          { turn: this.turn!, step: this.step, message, error: { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' } },
          { surfaceOp: 'append' },
        );
        this.rec.notStarted.push({ callId: id, seq: e.seq });
        return;
      }
      case 'compact': {
        const nodes = s.surface.nodes;
        if (nodes.length === 0) return;
        const i = op.a % nodes.length;
        const j = i + (op.b % (nodes.length - i));
        const shadowed = nodes.slice(i, j + 1);
        const compactionId = this.id('c');
        s.append('compaction/start', { compactionId, turn: this.turn ?? null });
        s.append('compaction/summary', {
          compactionId,
          summary: [{ type: 'text', text: 's' }],
          shadowedRange: { start: i, end: j },
          shadowedSeqs: shadowed,
          shadowedTokenCount: 1,
          provider: MODEL.provider,
          model: MODEL.model,
          usage: { inputTokens: 50, outputTokens: 5 },
        });
        this.rec.billed.push({ inputTokens: 50, outputTokens: 5 });
        const m: UserMessage = {
          id: this.id('sum'),
          role: 'user',
          content: [{ type: 'text', text: 'summary' }],
          source: { kind: 'plugin', plugin: 'compact', compactionId },
        };
        const e = s.append('user/message', m, {
          surfaceOp: { op: 'replace', start: nodes[i]!, end: nodes[j]! },
          sourceEventSeqs: shadowed,
        });
        this.rec.replaced.set(e.seq, shadowed);
        s.append('compaction/end', { compactionId, turn: this.turn ?? null });
        return;
      }
      case 'prune': {
        if (this.turn === undefined) return;
        const results = s.surface.nodes.filter((n) => s.at(n)!.type === 'tool/result');
        if (results.length === 0) return;
        const target = s.at(results[op.pick % results.length]!)! as import('../../../src/session/events.js').SessionEvent<'tool/result'>;
        const d = target.data;
        const block = d.message.content[0];
        s.append('compaction/prune', { shadowedRange: { start: 0, end: 0 }, shadowedSeqs: [target.seq], shadowedTokenCount: 1 });
        const e = s.append(
          'tool/result',
          { ...d, message: { ...d.message, content: [{ ...block, content: [{ type: 'text', text: '[pruned]' }] }] } },
          { surfaceOp: { op: 'replace', start: target.seq, end: target.seq }, sourceEventSeqs: [target.seq] },
        );
        this.rec.replaced.set(e.seq, [target.seq]);
        return;
      }
      case 'stepEnd':
        if (this.step === undefined) return;
        s.append('step/end', { turn: this.turn!, step: this.step });
        this.step = undefined;
        this.blocks = [];
        this.inFlight = [];
        return;
      case 'turnEnd': {
        if (this.turn === undefined) return;
        if (this.step !== undefined) this.run({ k: 'stepEnd' });
        const reason = REASONS[op.reason % REASONS.length]!;
        s.append('turn/end', { turn: this.turn, reason: reason as never });
        this.rec.turns.set(this.turn, reason.kind);
        this.turn = undefined;
        return;
      }
      case 'clock':
        this.time += op.dt;
        return;
    }
  }

  get openTurn(): number | undefined {
    return this.turn;
  }

  get openStep(): number | undefined {
    return this.step;
  }
}

export function drive(ops: readonly Op[], id?: string): Driver {
  const d = new Driver(id);
  for (const op of ops) d.run(op);
  return d;
}
