/**
 * A deterministic, realistic session workload for the benchmark (issue 2 item 9): a seeded PRNG
 * and a fixed clock, so every run and every machine sees the same events.
 *
 * Each turn follows the event order dsh writes for a turn: an inbox insert, turn/start, the
 * inbox claim, step 1 (prompt, request header on the first turn, a streamed answer of reasoning
 * deltas, ~200 text deltas and a streamed tool call, the assembled assistant message with usage
 * and exact chunk provenance, the tool call and its ~2 KB result), step 2 (~200 text deltas and
 * the final answer with usage), turn/end. 2,000 turns give about 970,000 events.
 */
import type { Session, SessionEvent, SessionEventType, SurfaceOp } from '../src/session/index.js';

export interface Draft {
  type: SessionEventType;
  data: unknown;
  time: number;
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
}

/** mulberry32: small, fast, good enough for workload shapes. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the a of to and in is that for it on with as this be are by was from at or an not have but can ' +
  'file function test error value return type string number session event log turn step model tool ' +
  'call result message append derive history surface replace seq time data json line header chunk ' +
  'stream token usage provider request response check invariant commit fork seed repair replay'
).split(' ');

export interface WorkloadOptions {
  turns?: number;
  seed?: number;
  /** Text deltas per answer (two answers per turn). */
  deltasPerAnswer?: number;
  reasoningDeltas?: number;
  toolCallDeltas?: number;
  toolResultBytes?: number;
  startTime?: number;
  /** Draws a word (default: the fixed list above); the search bench passes a large Zipf vocabulary. */
  word?: (rnd: () => number) => string;
}

export function generateWorkload(opts: WorkloadOptions = {}): Draft[] {
  const turns = opts.turns ?? 2000;
  const rnd = prng(opts.seed ?? 20260901);
  const deltas = opts.deltasPerAnswer ?? 200;
  const reasoningDeltas = opts.reasoningDeltas ?? 40;
  const callDeltas = opts.toolCallDeltas ?? 20;
  const resultBytes = opts.toolResultBytes ?? 2048;
  let time = opts.startTime ?? 1_755_000_000_000;
  const out: Draft[] = [];
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const word = opts.word ? (): string => opts.word!(rnd) : (): string => WORDS[Math.floor(rnd() * WORDS.length)]!;
  const token = (): string => (rnd() < 0.85 ? ` ${word()}` : rnd() < 0.5 ? '.' : ',\n');
  const sentence = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += token();
    return s.trim();
  };
  const push = (d: Omit<Draft, 'time'>, gap: number): number => {
    time += gap;
    out.push({ ...d, time });
    return out.length - 1;
  };

  for (let turn = 1; turn <= turns; turn++) {
    const prompt = { id: `user-${turn}`, role: 'user', content: [{ type: 'text', text: sentence(int(15, 60)) }], source: { kind: 'user' } };
    push({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [prompt] } }, int(5_000, 60_000));
    const turnStart = push({ type: 'turn/start', data: { turn } }, int(1, 5));
    push({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } }, 1);

    // Step 1: think, say something, call a tool.
    push({ type: 'step/start', data: { turn, step: 1 } }, 1);
    push({ type: 'user/message', data: prompt, surfaceOp: 'append', sourceEventSeqs: [turnStart] }, 1);
    if (turn === 1) {
      const system = sentence(400);
      const tools = ['bash', 'read', 'write'].map((name) => ({
        name,
        description: sentence(20),
        parameters: { type: 'object', properties: { path: { type: 'string' }, command: { type: 'string' } }, required: ['path'] },
      }));
      push(
        {
          type: 'request/header',
          data: {
            header: {
              config: { provider: 'deepseek', model: 'deepseek-chat', maxTokens: 8192 },
              adapterDefaults: { maxTokens: true },
              system,
              tools,
            },
            reason: 'initial',
          },
        },
        1,
      );
      push({ type: 'request/context', data: { provider: 'deepseek', model: 'deepseek-chat', contextWindow: 128_000 } }, 1);
    }
    const step1Chunks: number[] = [];
    const chunk = (step: number, c: unknown, gap: number, into: number[]): void => {
      into.push(push({ type: 'assistant/chunk', data: { turn, step, chunk: c } }, gap));
    };
    chunk(1, { type: 'block-start', index: 0, blockType: 'reasoning' }, int(300, 1500), step1Chunks);
    let reasoning = '';
    for (let i = 0; i < reasoningDeltas; i++) {
      const t = token();
      reasoning += t;
      chunk(1, { type: 'reasoning-delta', index: 0, text: t }, int(5, 40), step1Chunks);
    }
    chunk(1, { type: 'block-end', index: 0, block: { type: 'reasoning', text: reasoning } }, 1, step1Chunks);
    chunk(1, { type: 'block-start', index: 1, blockType: 'text' }, 1, step1Chunks);
    let text1 = '';
    for (let i = 0; i < deltas; i++) {
      const t = token();
      text1 += t;
      chunk(1, { type: 'text-delta', index: 1, text: t }, int(5, 40), step1Chunks);
    }
    chunk(1, { type: 'block-end', index: 1, block: { type: 'text', text: text1 } }, 1, step1Chunks);
    const callId = `call_${turn}_${int(100000, 999999)}`;
    const args = JSON.stringify({ command: `grep -rn ${word()} src/${word()}/${word()}.ts`, path: `/work/repo/src/${word()}` });
    chunk(1, { type: 'block-start', index: 2, blockType: 'tool-call' }, 1, step1Chunks);
    const piece = Math.ceil(args.length / callDeltas);
    for (let i = 0; i < callDeltas; i++) {
      const a = args.slice(i * piece, (i + 1) * piece);
      // The provider names the call in its first delta only (OpenAI-style streaming).
      const c =
        i === 0
          ? { type: 'tool-call-delta', index: 2, id: callId, name: 'bash', argumentsDelta: a }
          : { type: 'tool-call-delta', index: 2, id: callId, argumentsDelta: a };
      chunk(1, c, int(5, 40), step1Chunks);
    }
    chunk(1, { type: 'block-end', index: 2, block: { type: 'tool-call', id: callId, name: 'bash', arguments: args } }, 1, step1Chunks);
    const usage1 = {
      inputTokens: int(500, 5000),
      outputTokens: int(200, 400),
      cacheReadTokens: int(1000, 100_000),
      reasoningTokens: int(30, 60),
    };
    chunk(1, { type: 'usage', usage: usage1 }, 1, step1Chunks);
    chunk(1, { type: 'finish', reason: { kind: 'tool-calls' } }, 1, step1Chunks);
    push(
      {
        type: 'assistant/message',
        data: {
          turn,
          step: 1,
          message: {
            id: `assistant-${turn}-1`,
            role: 'assistant',
            content: [
              { type: 'reasoning', text: reasoning },
              { type: 'text', text: text1 },
              { type: 'tool-call', id: callId, name: 'bash', arguments: args },
            ],
            source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' },
          },
          usage: usage1,
        },
        surfaceOp: 'append',
        sourceEventSeqs: step1Chunks,
      },
      1,
    );
    const callSeq = push({ type: 'tool/call', data: { turn, step: 1, callId, name: 'bash', arguments: args } }, 1);
    let result = '';
    while (result.length < resultBytes) result += `src/${word()}/${word()}.ts:${int(1, 900)}: ${sentence(int(4, 12))}\n`;
    result = result.slice(0, resultBytes);
    push(
      {
        type: 'tool/result',
        data: {
          turn,
          step: 1,
          message: {
            id: `tool-result-${turn}`,
            role: 'user',
            content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: result }] }],
            source: { kind: 'tool', callId },
          },
          meta: { exitCode: 0, durationMs: int(20, 2000) },
        },
        surfaceOp: 'append',
        sourceEventSeqs: [callSeq],
      },
      int(20, 2000),
    );
    push({ type: 'step/end', data: { turn, step: 1 } }, 1);

    // Step 2: the final answer.
    push({ type: 'step/start', data: { turn, step: 2 } }, 1);
    const step2Chunks: number[] = [];
    chunk(2, { type: 'block-start', index: 0, blockType: 'text' }, int(300, 1500), step2Chunks);
    let text2 = '';
    for (let i = 0; i < deltas; i++) {
      const t = token();
      text2 += t;
      chunk(2, { type: 'text-delta', index: 0, text: t }, int(5, 40), step2Chunks);
    }
    chunk(2, { type: 'block-end', index: 0, block: { type: 'text', text: text2 } }, 1, step2Chunks);
    const usage2 = { inputTokens: int(500, 5000), outputTokens: int(200, 300), cacheReadTokens: int(1000, 100_000) };
    chunk(2, { type: 'usage', usage: usage2 }, 1, step2Chunks);
    chunk(2, { type: 'finish', reason: { kind: 'stop' } }, 1, step2Chunks);
    push(
      {
        type: 'assistant/message',
        data: {
          turn,
          step: 2,
          message: {
            id: `assistant-${turn}-2`,
            role: 'assistant',
            content: [{ type: 'text', text: text2 }],
            source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' },
          },
          usage: usage2,
        },
        surfaceOp: 'append',
        sourceEventSeqs: step2Chunks,
      },
      1,
    );
    push({ type: 'step/end', data: { turn, step: 2 } }, 1);
    push({ type: 'turn/end', data: { turn, reason: { kind: 'completed' } } }, 1);
  }
  return out;
}

/** Append one draft to `s` with its surface op and chunk provenance (the log's own append path). */
export function appendDraft(s: Session, d: Draft): SessionEvent {
  const append = s.append as unknown as (type: string, data: unknown, o?: unknown) => SessionEvent;
  return append.call(
    s,
    d.type,
    d.data,
    d.surfaceOp === undefined
      ? undefined
      : d.sourceEventSeqs === undefined
        ? { surfaceOp: d.surfaceOp }
        : { surfaceOp: d.surfaceOp, sourceEventSeqs: d.sourceEventSeqs },
  );
}
