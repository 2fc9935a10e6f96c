/** Stored sessions whose seqs are known, written through the store's API (the search tests' logs). */
import { SessionStore } from '../../src/store/index.js';

export interface Turn {
  prompt: string;
  reasoning?: string;
  answer: string;
  call?: { name: string; args: string; result: string };
}

/** A stored session whose seqs are known: turn/start, step/start, user, assistant, [call, result], step/end, turn/end. */
export async function makeSession(
  root: string,
  cwd: string,
  id: string,
  turns: Turn[],
): Promise<{ path: string; seqs: Record<string, number> }> {
  let now = 1_700_000_000_000;
  const store = new SessionStore({ root, clock: () => now++ });
  const stored = await store.create({ cwd, id });
  const s = stored.session;
  const seqs: Record<string, number> = {};
  turns.forEach((t, i) => append(s, i + 1, t, seqs));
  await store.close();
  return { path: stored.path, seqs };
}

type S = Awaited<ReturnType<SessionStore['create']>>['session'];
export function append(s: S, turn: number, t: Turn, seqs: Record<string, number>): void {
  s.append('turn/start', { turn });
  s.append('step/start', { turn, step: 1 });
  seqs[t.prompt] = s.append(
    'user/message',
    { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: t.prompt }], source: { kind: 'user' } },
    { surfaceOp: 'append' },
  ).seq;
  const content: (
    | { type: 'text'; text: string }
    | { type: 'reasoning'; text: string }
    | { type: 'tool-call'; id: string; name: string; arguments: string }
  )[] = [];
  if (t.reasoning) content.push({ type: 'reasoning', text: t.reasoning });
  content.push({ type: 'text', text: t.answer });
  if (t.call) content.push({ type: 'tool-call', id: `c${turn}`, name: t.call.name, arguments: t.call.args });
  const a = s.append(
    'assistant/message',
    { turn, step: 1, message: { id: `a${turn}`, role: 'assistant', content, source: { kind: 'model', provider: 'p', model: 'm' } } },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
  seqs[t.answer] = a.seq;
  if (t.reasoning) seqs[t.reasoning] = a.seq;
  if (t.call) {
    const c = s.append('tool/call', { turn, step: 1, callId: `c${turn}`, name: t.call.name, arguments: t.call.args });
    seqs[t.call.args] = c.seq;
    seqs[t.call.result] = s.append(
      'tool/result',
      {
        turn,
        step: 1,
        message: {
          id: `r${turn}`,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: `c${turn}`, content: [{ type: 'text', text: t.call.result }] }],
          source: { kind: 'tool', callId: `c${turn}` },
        },
      },
      { surfaceOp: 'append', sourceEventSeqs: [c.seq] },
    ).seq;
  }
  s.append('step/end', { turn, step: 1 });
  s.append('turn/end', { turn, reason: { kind: 'completed' } });
}
