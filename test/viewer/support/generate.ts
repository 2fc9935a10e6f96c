/**
 * A deterministic generator of big, valid dsh v0 logs for the viewer's scale tests. Events are
 * built as plain objects one turn at a time and written through the codec's encoder (chunk runs
 * packed into rows), so a million-event log never sits in memory whole. The test loads the file
 * with the real loader, which validates every event: a generator bug fails loudly there.
 *
 * (bench/generate.ts belongs to the bench and was not committed when this was written; this one
 * is small and shaped for what the viewer shows: several steps per turn, streamed text, tool
 * calls with results, a tool error now and then.)
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { encodeEvents, encodeHeaderLine, type SessionEvent, type SessionHeader } from '../../../src/session/index.js';

export interface BigLogOptions {
  /** Stop after the turn that reaches this many events. */
  events: number;
  stepsPerTurn?: number;
  /** Text deltas streamed per assistant message. */
  deltas?: number;
}

export interface BigLogFacts {
  events: number;
  turns: number;
  steps: number;
  toolCalls: number;
}

const WORDS = ['the', 'log', 'is', 'the', 'source', 'of', 'truth', 'and', 'history', 'is', 'derived', 'from', 'it', 'turn', 'step', 'tool'];

export const BIG_HEADER: SessionHeader = {
  version: 0,
  id: 'big-0000-viewer',
  createdAt: Date.UTC(2026, 0, 1),
  cwd: '/tmp/big',
  delegationDepth: 0,
};

export function writeBigLog(path: string, opts: BigLogOptions): BigLogFacts {
  const stepsPerTurn = opts.stepsPerTurn ?? 3;
  const deltas = opts.deltas ?? 40;
  let seq = 0;
  let time = BIG_HEADER.createdAt;
  let rnd = 12345;
  const word = (): string => {
    rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
    return WORDS[rnd % WORDS.length]!;
  };
  const facts: BigLogFacts = { events: 0, turns: 0, steps: 0, toolCalls: 0 };
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, encodeHeaderLine(BIG_HEADER));
    for (let turn = 1; seq < opts.events; turn++) {
      const out: Record<string, unknown>[] = [];
      const ev = (type: string, data: unknown, extra: Record<string, unknown> = {}): number => {
        time += 3;
        out.push({ type, seq, time, data, ...extra });
        return seq++;
      };
      const prompt = {
        id: `p-${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `Task ${turn}: ${word()} ${word()} ${word()}` }],
        source: { kind: 'user' },
      };
      ev('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
      ev('turn/start', { turn });
      ev('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
      for (let step = 1; step <= stepsPerTurn; step++) {
        ev('step/start', { turn, step });
        if (step === 1) {
          ev('user/message', prompt, { surfaceOp: 'append' });
          if (turn === 1)
            ev('request/header', {
              header: { config: { provider: 'gen', model: 'gen-1' }, system: 'You generate logs.' },
              reason: 'initial',
            });
        }
        const callsTool = step < stepsPerTurn;
        const chunkSeqs: number[] = [];
        const chunk = (c: unknown): void => {
          chunkSeqs.push(ev('assistant/chunk', { turn, step, chunk: c }));
        };
        let text = '';
        chunk({ type: 'block-start', index: 0, blockType: 'text' });
        for (let k = 0; k < deltas; k++) {
          const d = `${k === 0 ? '' : ' '}${word()}`;
          text += d;
          chunk({ type: 'text-delta', index: 0, text: d });
        }
        chunk({ type: 'block-end', index: 0, block: { type: 'text', text } });
        const content: unknown[] = [{ type: 'text', text }];
        const callId = `call-${turn}-${step}`;
        const args = JSON.stringify({ path: `src/file-${turn}-${step}.ts` });
        if (callsTool) {
          chunk({ type: 'block-start', index: 1, blockType: 'tool-call' });
          chunk({ type: 'tool-call-delta', index: 1, id: callId, name: 'read', argumentsDelta: args });
          const block = { type: 'tool-call', id: callId, name: 'read', arguments: args };
          chunk({ type: 'block-end', index: 1, block });
          content.push(block);
        }
        const usage = { inputTokens: 1000 + turn, outputTokens: deltas, cacheReadTokens: 500 };
        chunk({ type: 'usage', usage });
        chunk({ type: 'finish', reason: { kind: callsTool ? 'tool-calls' : 'stop' } });
        ev(
          'assistant/message',
          {
            turn,
            step,
            message: { id: `a-${turn}-${step}`, role: 'assistant', content, source: { kind: 'model', provider: 'gen', model: 'gen-1' } },
            usage,
          },
          { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
        );
        if (callsTool) {
          const callSeq = ev('tool/call', { turn, step, callId, name: 'read', arguments: args });
          const failed = (turn + step) % 7 === 0;
          const result: Record<string, unknown> = {
            turn,
            step,
            message: {
              id: `r-${turn}-${step}`,
              role: 'user',
              content: [
                {
                  type: 'tool-result',
                  toolCallId: callId,
                  content: [{ type: 'text', text: failed ? 'not found' : `contents of file ${turn}-${step}` }],
                  ...(failed ? { isError: true } : {}),
                },
              ],
              source: { kind: 'tool', callId },
            },
          };
          if (failed) result.error = { name: 'FsError', code: 'FS_NOT_FOUND' };
          ev('tool/result', result, { surfaceOp: 'append', sourceEventSeqs: [callSeq] });
          facts.toolCalls++;
        }
        ev('step/end', { turn, step });
        facts.steps++;
      }
      ev('turn/end', { turn, reason: { kind: 'completed' } });
      facts.turns++;
      writeSync(fd, encodeEvents(out as unknown as SessionEvent[]));
    }
  } finally {
    closeSync(fd);
  }
  facts.events = seq;
  return facts;
}
