/**
 * Tool calls and their results are never separated: safe cut positions over hand-built
 * histories, the span choice when the natural cut falls between a call and its result, a span
 * that would split a pair at either edge refused, and a compaction of a real session whose
 * natural cut falls inside a pair of parallel calls.
 */
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../../src/model/message.js';
import { chooseCut, safeCuts, compactNow, runCompaction, CompactionError, modelSummarizer } from '../../src/compaction/index.js';
import { textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { TestModel, bigTool, call, fail, ofType, say, testAgent, textOf, usageFor } from './helpers.js';

const u = (text: string): UserMessage => ({ id: text, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });
const a = (...calls: string[]): AssistantMessage => ({
  id: `a-${calls.join('-')}`,
  role: 'assistant',
  content: calls.length
    ? calls.map((id) => ({ type: 'tool-call' as const, id, name: 't', arguments: '{}' }))
    : [{ type: 'text', text: 'ok' }],
  source: { kind: 'model', provider: 'p', model: 'm' },
});
const r = (id: string): ToolResultMessage => ({
  id: `r-${id}`,
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: 'out' }] }],
  source: { kind: 'tool', callId: id },
});

describe('safe cuts', () => {
  it('a cut between a call and its result is unsafe; around the pair it is safe', () => {
    // positions:        0       1          2        3
    expect(safeCuts([u('go'), a('c1'), r('c1'), a()])).toEqual([true, true, false, true, true]);
  });

  it('parallel calls form one unit until their last result', () => {
    expect(safeCuts([u('go'), a('c1', 'c2'), r('c1'), r('c2'), a()])).toEqual([true, true, false, false, true, true]);
    // Results in the other order: the same.
    expect(safeCuts([u('go'), a('c1', 'c2'), r('c2'), r('c1'), a()])).toEqual([true, true, false, false, true, true]);
  });

  it('a repeated call id pairs with the latest open call, not the first one', () => {
    expect(safeCuts([a('x'), r('x'), u('again'), a('x'), r('x')])).toEqual([true, false, true, true, false, true]);
  });

  it('an unanswered call makes every later cut unsafe; an orphan result constrains nothing', () => {
    expect(safeCuts([u('go'), a('c1'), u('steer')])).toEqual([true, true, false, false]);
    expect(safeCuts([r('gone'), u('go'), a()])).toEqual([true, true, true, true]);
  });

  it('nodes that project to nothing (empty answers) are cut around like any other', () => {
    const none: (Message | null)[] = [u('go'), null, a('c1'), r('c1')];
    expect(safeCuts(none)).toEqual([true, true, true, false, true]);
  });
});

describe('choosing the span', () => {
  const messages = [u('go'), a('c1'), r('c1'), a(), u('next'), a()];
  const safe = safeCuts(messages);
  const tokens = [10, 10, 500, 10, 10, 10];

  it('keeps the retain budget verbatim when the cut there is safe', () => {
    // Tail from position 3 is 30 tokens: it fits 40; position 3 is safe.
    expect(chooseCut({ tokens, safe, protectFrom: 6, retainBudget: 40, mode: 'pressure' })).toBe(3);
  });

  it('moves to the next safe cut when the budget boundary falls between a call and its result', () => {
    // Tail from 2 (530) fits 535 but would orphan the result; from 1 (540) does not fit; 3 is the next safe cut.
    expect(chooseCut({ tokens, safe, protectFrom: 6, retainBudget: 535, mode: 'pressure' })).toBe(3);
    // A budget that fits the whole pair keeps it: the cut is before the call.
    expect(chooseCut({ tokens, safe, protectFrom: 6, retainBudget: 545, mode: 'pressure' })).toBe(1);
  });

  it('overflow takes all but the newest unit, and never the protected input', () => {
    expect(chooseCut({ tokens, safe, protectFrom: 6, mode: 'overflow' })).toBe(5);
    expect(chooseCut({ tokens, safe, protectFrom: 4, mode: 'overflow' })).toBe(4);
    expect(chooseCut({ tokens, safe, protectFrom: 2, mode: 'overflow' })).toBe(1);
    expect(chooseCut({ tokens, safe, protectFrom: 0, mode: 'overflow' })).toBeUndefined();
  });

  it('one indivisible unit cannot be compacted', () => {
    const unit = [a('c1'), r('c1')];
    expect(chooseCut({ tokens: [10, 500], safe: safeCuts(unit), protectFrom: 2, mode: 'overflow' })).toBeUndefined();
  });

  it('manual compaction of a history that fits the budget keeps only the newest unit', () => {
    expect(chooseCut({ tokens, safe, protectFrom: 6, retainBudget: 10_000, mode: 'manual' })).toBe(5);
    expect(chooseCut({ tokens, safe, protectFrom: 6, retainBudget: 10_000, mode: 'pressure' })).toBe(1);
  });
});

describe('compacting a session whose natural cut falls inside a tool pair', () => {
  async function parallelSession() {
    // Turn 1: two parallel reads, each result ~500 tokens, then an answer; turn 2: a short exchange.
    const model = new TestModel(
      [
        (req) =>
          toolCallResponse(
            [
              { id: 'c1', name: 'read', args: { path: 'one' } },
              { id: 'c2', name: 'read', args: { path: 'two' } },
            ],
            { usage: usageFor(req) },
          ),
        say('Both read.'),
        say('Second answer.'),
      ],
      [(req) => textResponse('Read one and two.', { usage: usageFor(req) })],
    );
    const agent = testAgent(model, { compaction: { auto: false, retainTokens: 600 }, agent: { tools: [bigTool(2000)] } });
    agent.prompt('Read one and two.');
    await agent.whenIdle();
    agent.prompt('And now?');
    await agent.whenIdle();
    return { agent, model };
  }

  it('the span ends before the call or after both results, never between', async () => {
    const { agent } = await parallelSession();
    const before = agent.session.surface.nodes;
    // Surface: prompt, calls, result 1, result 2, answer, prompt, answer. 600 tokens of tail would
    // end inside the pair (one result is ~510): the cut moves past both results.
    expect(before).toHaveLength(7);
    const result = await compactNow(agent);
    expect(result?.shadowedSeqs).toEqual(before.slice(0, 4));
    const derived = agent.session.deriveMessages().toArray();
    const calls = derived.flatMap((m) => m.content.filter((b) => b.type === 'tool-call').map((b) => (b.type === 'tool-call' ? b.id : '')));
    const results = derived.flatMap((m) =>
      m.content.filter((b) => b.type === 'tool-result').map((b) => (b.type === 'tool-result' ? b.toolCallId : '')),
    );
    expect(calls).toEqual([]);
    expect(results).toEqual([]);
  });

  it('an explicit span that would split a pair at its start or its end is refused before anything is written', async () => {
    const { agent } = await parallelSession();
    const n = agent.session.length;
    const attempt = (first: number, last: number) =>
      runCompaction(
        agent,
        { first, last, turn: null },
        { summarizer: modelSummarizer, maxTokens: 100, signal: new AbortController().signal },
      );
    // End edge: after position 2 (first result), before the second.
    await expect(attempt(0, 2)).rejects.toMatchObject({ code: 'SPLITS_TOOL_PAIR' });
    // Start edge: position 2 starts between the call and its results.
    await expect(attempt(2, 4)).rejects.toMatchObject({ code: 'SPLITS_TOOL_PAIR' });
    await expect(attempt(0, 2)).rejects.toBeInstanceOf(CompactionError);
    expect(agent.session.length).toBe(n);
    expect(ofType(agent.session.events, 'compaction/start')).toEqual([]);
  });
});

// The tool sequence above, but as the pressure trigger sees it mid-turn.
describe('a runaway turn', () => {
  it('its old steps are compacted: turn boundaries are not protected', async () => {
    const model = new TestModel(
      [call('c1', 'read', { path: 'a' }), call('c2', 'read', { path: 'b' }), call('c3', 'read', { path: 'c' }), say('done')],
      [(req) => textResponse('Read a and b.', { usage: usageFor(req) })],
    );
    const agent = testAgent(model, {
      compaction: { contextWindow: 2000, thresholdRatio: 0.8, retainTokens: 600 },
      agent: { tools: [bigTool(2000)] },
    });
    agent.prompt('Read a, b and c.');
    await agent.whenIdle();
    const starts = ofType(agent.session.events, 'compaction/start');
    expect(starts.map((e) => e.data.turn)).toEqual([1]);
    const end = ofType(agent.session.events, 'turn/end')[0]!;
    expect(end.data.reason).toEqual({ kind: 'completed' });
    // The compaction sits inside turn 1, between two of its steps.
    const turnStart = ofType(agent.session.events, 'turn/start')[0]!.seq;
    expect(starts[0]!.seq).toBeGreaterThan(turnStart);
    expect(starts[0]!.seq).toBeLessThan(end.seq);
  });
});

describe("the current step's input", () => {
  const overflow = fail({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' });
  const summary = (req: Parameters<typeof usageFor>[0]) =>
    textResponse('Earlier: a long premise and its answer.', { usage: usageFor(req) });

  it('is never shadowed on overflow: the span ends before the prompt the step entered', async () => {
    const model = new TestModel([say('Noted.'), overflow, say('Answer to the second prompt.')], [summary]);
    const agent = testAgent(model);
    agent.prompt(`A long premise. ${'Remember every word of it. '.repeat(30)}`);
    await agent.whenIdle();
    agent.prompt('Second prompt.');
    await agent.whenIdle();
    const events = agent.session.events;
    const second = ofType(events, 'user/message').find((e) => textOf(e.data) === 'Second prompt.')!;
    const logged = ofType(events, 'compaction/summary')[0]!;
    expect(logged.data.shadowedSeqs).toHaveLength(2);
    expect(logged.data.shadowedSeqs).not.toContain(second.seq);
    const retried = model.conversation.at(-1)!;
    expect(retried.messages.map(textOf)).toEqual([
      expect.stringContaining('<compacted-summary>Earlier: a long premise and its answer.</compacted-summary>'),
      'Second prompt.',
    ]);
    expect(ofType(events, 'turn/end').at(-1)!.data.reason).toEqual({ kind: 'completed' });
  });

  it('a step whose own input is all there is cannot be helped: no compaction, no retry, the failure stands', async () => {
    const model = new TestModel([overflow, say('never')], [summary]);
    const agent = testAgent(model);
    agent.prompt(`A long premise. ${'Remember every word of it. '.repeat(30)}`);
    await agent.whenIdle();
    const end = ofType(agent.session.events, 'turn/end')[0]!;
    expect(end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('CONTEXT_WINDOW_EXCEEDED');
    expect(ofType(agent.session.events, 'compaction/start')).toEqual([]);
    expect(model.summaries).toEqual([]);
  });
});
