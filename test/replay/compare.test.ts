/** `compareLogs`: what must match, what may differ, and what is listed as not reproduced. */
import { describe, expect, it } from 'vitest';
import { compareLogs } from '../../src/replay/compare.js';
import { LogBuilder, user } from './helpers.js';

/** One turn: a tool step, then a text step. Message ids are minted per build, like per run. */
function recording(opts: { result?: string; reply?: string; title?: boolean; reason?: 'completed' | 'max-tokens' } = {}): LogBuilder {
  const log = new LogBuilder();
  const p = user('list the files', 'prompt-1');
  log.startTurn(p).startStep(p);
  if (opts.title) log.session.append('session/title', { title: 'list the files' });
  log.call('call_1', 'ls', '{"dir":"."}', opts.result ?? 'a.txt').endStep();
  log
    .startStep()
    .reply(opts.reply ?? 'one file')
    .endStep()
    .endTurn({ kind: opts.reason ?? 'completed' });
  return log;
}

describe('compareLogs', () => {
  it('matches two runs of the same interaction and says how much it compared', () => {
    const c = compareLogs(recording().events, recording().events);
    expect(c.differences).toEqual([]);
    expect(c.matches).toBe(true);
    expect(c.checked).toMatchObject({ chunks: 2, toolCalls: 2, assistant: 2, endReasons: 1 });
    expect(c.counts.recorded).toEqual({ turns: 1, steps: 2, attempts: 2, chunks: 9, toolCalls: 1 });
    expect(c.summary).toMatch(/^MATCH/);
  });

  it('fails on a chunk that differs, naming the step and the path', () => {
    const c = compareLogs(recording().events, recording({ reply: 'two files' }).events);
    expect(c.matches).toBe(false);
    const chunk = c.differences.find((d) => d.category === 'chunks');
    expect(chunk).toMatchObject({ turn: 1, step: 2, path: 'chunks[1].text', recorded: 'one file', replayed: 'two files' });
    expect(c.differences.map((d) => d.category)).toEqual(['chunks', 'assistant']);
    expect(c.summary).toContain('turn 1 step 2: chunks first differs at chunks[1].text');
  });

  it('fails on a different end reason', () => {
    const c = compareLogs(recording().events, recording({ reason: 'max-tokens' }).events);
    expect(c.differences).toEqual([
      expect.objectContaining({ category: 'endReasons', turn: 1, path: 'reason.kind', recorded: 'completed', replayed: 'max-tokens' }),
    ]);
  });

  it('reports a different tool result without failing', () => {
    const c = compareLogs(recording().events, recording({ result: 'b.txt' }).events);
    expect(c.matches).toBe(true);
    expect(c.toolResults).toEqual([
      expect.objectContaining({
        category: 'toolResults',
        where: 'turn 1 step 1 call call_1',
        path: 'result.message.content[0].content[0].text',
        recorded: 'a.txt',
        replayed: 'b.txt',
      }),
    ]);
    expect(c.summary).toContain('1 differ (allowed)');
  });

  it('fails on a missing step and on an extra turn', () => {
    const short = new LogBuilder();
    const p = user('list the files', 'prompt-1');
    short.startTurn(p).startStep(p).call('call_1', 'ls', '{"dir":"."}', 'a.txt').endStep().endTurn();
    const missing = compareLogs(recording().events, short.events);
    expect(missing.differences).toContainEqual(
      expect.objectContaining({ category: 'structure', turn: 1, step: 2, message: 'turn 1 step 2 is recorded but was not replayed' }),
    );

    const long = recording();
    const q = user('more', 'prompt-2');
    long.startTurn(q).startStep(q).reply('no').endStep().endTurn();
    const extra = compareLogs(recording().events, long.events);
    expect(extra.differences).toEqual([
      expect.objectContaining({ category: 'structure', turn: 2, message: 'the replay ran a turn 2 the recording does not have' }),
    ]);
  });

  it('lists plugin events the replay did not write as not reproduced', () => {
    const c = compareLogs(recording({ title: true }).events, recording().events);
    expect(c.matches).toBe(true);
    expect(c.notReproduced).toEqual([{ type: 'session/title', recorded: 1, replayed: 0 }]);
    expect(c.summary).toContain('not reproduced: session/title (recorded 1, replayed 0)');
  });

  it('compares entered input, ignoring message ids', () => {
    const a = recording();
    const b = new LogBuilder();
    const p = user('list the files, please', 'prompt-1');
    b.startTurn(p).startStep(p).call('call_1', 'ls', '{"dir":"."}', 'a.txt').endStep();
    b.startStep().reply('one file').endStep().endTurn();
    const c = compareLogs(a.events, b.events);
    expect(c.differences).toEqual([
      expect.objectContaining({ category: 'inputs', turn: 1, step: 1, path: 'inputs.entered[0].content[0].text' }),
    ]);
  });
});
