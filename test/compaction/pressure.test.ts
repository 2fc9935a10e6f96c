/**
 * Pressure-triggered compaction over a long scripted session: twenty reads of ~500 tokens each in
 * a 6000-token window. Requests stay inside the window, each compaction makes the next request
 * smaller and puts the summary in it, and every request equals the history the log derives at
 * that point (model-visible means recorded), checked independently of the loop's own check.
 */
import { describe, expect, it } from 'vitest';
import { textResponse } from '../../src/llm/scripted.js';
import { withoutIds } from '../../src/session/json-diff.js';
import { messageArray } from '../../src/model/history.js';
import type { CompactionError } from '../../src/compaction/index.js';
import {
  TestModel,
  bigTool,
  call,
  fail,
  ofType,
  providerCount,
  recordedRequests,
  say,
  testAgent,
  textOf,
  usageFor,
  type Reply,
} from './helpers.js';

const WINDOW = 6000;
const READS = 20;

function script(): Reply[] {
  const out: Reply[] = [];
  for (let i = 1; i <= READS; i++) out.push(call(`c${i}`, 'read', { path: `file${i}.txt` }));
  out.push(say('All twenty files read.'));
  return out;
}
const summaries = (n: number): Reply[] =>
  Array.from(
    { length: n },
    (_, i) => (req) => textResponse(`Summary ${i + 1}: files read so far hold lorem ipsum.`, { usage: usageFor(req) }),
  );

async function run(compact: boolean, summaryReplies: Reply[] = summaries(10)) {
  const model = new TestModel(script(), summaryReplies, { contextWindow: WINDOW });
  const agent = testAgent(model, { compaction: compact ? {} : false, agent: { tools: [bigTool(2000)] } });
  const failed: CompactionError[] = [];
  agent.on('compaction/failed', (p) => void failed.push(p.error));
  agent.prompt('Read file1.txt to file20.txt one at a time.');
  await agent.whenIdle();
  return { agent, model, failed };
}

describe('a long session under pressure', () => {
  it('without compaction the requests outgrow the window (the scenario is not vacuous)', async () => {
    const { model } = await run(false);
    expect(Math.max(...model.conversation.map(providerCount))).toBeGreaterThan(WINDOW);
  });

  it('compacts before the step that would cross the threshold; every request stays inside the window', async () => {
    const { agent, model, failed } = await run(true);
    const events = agent.session.events;
    expect(failed).toEqual([]);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual([{ kind: 'completed' }]);
    const ends = ofType(events, 'compaction/end');
    expect(ends.length).toBeGreaterThanOrEqual(2);
    expect(ends.every((e) => e.data.error === undefined && e.data.turn === 1)).toBe(true);
    for (const r of model.conversation) expect(providerCount(r)).toBeLessThan(WINDOW);
    expect(model.summaries).toHaveLength(ends.length);
    // A later compaction folds the earlier checkpoint (the head of the surface) into its summary.
    const logged = ofType(events, 'compaction/summary');
    expect(logged[1]!.data.shadowedSeqs[0]).toBe(logged[0]!.seq + 1);
    expect(textOf(model.summaries[1]!.messages.at(0)!)).toContain(textOf({ content: logged[0]!.data.summary }));
  });

  it('each compaction makes the next request smaller and puts its summary in it', async () => {
    const { agent, model } = await run(true);
    const events = agent.session.events;
    const summariesLogged = ofType(events, 'compaction/summary');
    // Conversation request i was made just before the i-th attempt's first chunk.
    const attemptSeqs: number[] = [];
    let open = false;
    for (const e of events) {
      if (e.type !== 'assistant/chunk') continue;
      if (!open) attemptSeqs.push(e.seq);
      open = e.data.chunk.type !== 'finish';
    }
    expect(attemptSeqs).toHaveLength(model.conversation.length);
    for (const s of summariesLogged) {
      const after = attemptSeqs.findIndex((seq) => seq > s.seq);
      expect(after).toBeGreaterThan(0);
      const before = model.conversation[after - 1]!;
      const next = model.conversation[after]!;
      expect(providerCount(next)).toBeLessThan(providerCount(before));
      const first = textOf(next.messages.at(0)!);
      expect(first).toContain(`<compacted-summary>${textOf({ content: s.data.summary })}</compacted-summary>`);
      // The replace is the checkpoint the next request starts with.
      const replace = events[s.seq + 1]!;
      expect(replace.type).toBe('user/message');
      expect(typeof replace.surfaceOp === 'object' && replace.surfaceOp.op).toBe('replace');
      expect(events[s.seq + 2]!.type).toBe('compaction/end');
    }
  });

  it('every request the model got is exactly the history the log derives at that point', async () => {
    const { agent, model } = await run(true);
    const fromLog = recordedRequests(agent.session.events);
    expect(fromLog).toHaveLength(model.conversation.length);
    model.conversation.forEach((r, i) => expect(withoutIds(messageArray(r.messages))).toEqual(fromLog[i]));
    // The ids too: the request is the log's own messages.
    expect(messageArray(model.conversation.at(-1)!.messages)).toEqual(
      agent.session.deriveMessages().toArray().slice(0, model.conversation.at(-1)!.messages.length),
    );
  });

  it('a failing summariser is on record, reported, and the turn goes on with the full history', async () => {
    const { agent, model, failed } = await run(true, [fail({ code: 'SERVER', message: 'summariser down' }), ...summaries(10)]);
    const ends = ofType(agent.session.events, 'compaction/end');
    expect(ends[0]!.data.error).toBe('SUMMARY_FAILED: summariser down [SERVER]');
    expect(failed.map((e) => e.code)).toEqual(['SUMMARY_FAILED']);
    // The failed attempt replaced nothing: the request after it carried the whole history.
    const firstEnd = ends[0]!.seq;
    const chunkAfter = agent.session.events.find((e) => e.seq > firstEnd && e.type === 'assistant/chunk')!;
    const idx = recordedRequests(agent.session.events.slice(0, chunkAfter.seq + 1)).length - 1;
    expect(textOf(model.conversation[idx]!.messages.at(0)!)).toBe('Read file1.txt to file20.txt one at a time.');
    expect(ofType(agent.session.events, 'turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    // The next pre-step tried again and succeeded.
    expect(ends.slice(1).some((e) => e.data.error === undefined)).toBe(true);
  });
});
