/**
 * Small recorded sessions for driving `dsh sdk` / `dsh run` with `--replay-model`: each turn's
 * model call either answers a text, or streams a little and never finishes (a recorded cancel
 * point: the replay then waits until the request is cancelled).
 */
import { writeFileSync } from 'node:fs';
import { Session } from '../../src/session/index.js';
import { encodeJsonl } from '../../src/session/codec/jsonl.js';

export type RecordedTurn = { prompt: string; answer: string } | { prompt: string; hang: true };

export const PROVIDER = 'recorded';
export const MODEL = 'replayed-model';

export function writeRecording(file: string, turns: readonly RecordedTurn[]): void {
  const s = Session.create({ header: { cwd: '/recorded' } });
  turns.forEach((t, i) => {
    const turn = i + 1;
    s.append('turn/start', { turn });
    s.append('step/start', { turn, step: 1 });
    s.append(
      'user/message',
      { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: t.prompt }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    if (turn === 1)
      s.append('request/header', {
        header: { config: { provider: PROVIDER, model: MODEL }, system: 'recorded', tools: [] },
        reason: 'initial',
      });
    const first = s.length;
    const chunk = (c: unknown): void => void s.append('assistant/chunk', { turn, step: 1, chunk: c as never });
    chunk({ type: 'block-start', index: 0, blockType: 'text' });
    if ('hang' in t) {
      chunk({ type: 'text-delta', index: 0, text: 'working' });
      s.append('step/end', { turn, step: 1 });
      s.append('turn/end', { turn, reason: { kind: 'aborted', reason: { kind: 'user' } } });
      return;
    }
    chunk({ type: 'text-delta', index: 0, text: t.answer });
    chunk({ type: 'block-end', index: 0, block: { type: 'text', text: t.answer } });
    chunk({ type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } });
    chunk({ type: 'finish', reason: { kind: 'stop' } });
    const seqs = Array.from({ length: s.length - first }, (_, k) => first + k);
    s.append(
      'assistant/message',
      {
        turn,
        step: 1,
        message: {
          id: `a${turn}`,
          role: 'assistant',
          content: [{ type: 'text', text: t.answer }],
          source: { kind: 'model', provider: PROVIDER, model: MODEL },
        },
        usage: { inputTokens: 3, outputTokens: 2 },
      },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
    s.append('step/end', { turn, step: 1 });
    s.append('turn/end', { turn, reason: { kind: 'completed' } });
  });
  writeFileSync(file, encodeJsonl(s.header, s.events));
}
