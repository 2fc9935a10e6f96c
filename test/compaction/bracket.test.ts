/**
 * The compaction bracket as it lands in the log: every field of compaction/start, the summary,
 * the replacing checkpoint and compaction/end; the summariser's request; the log reloaded through
 * JSONL and checked by `dsh log check`; the lock; a failing summariser; the /compact command.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { createAgent } from '../../src/create-agent.js';
import { textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import type { GenerateRequest } from '../../src/model/request.js';
import type { UserMessage } from '../../src/model/message.js';
import {
  CHECKPOINT_PREAMBLE,
  SUMMARY_INSTRUCTION,
  compaction,
  compactNow,
  openCompaction,
  runCompactCommand,
  CompactionError,
  modelSummarizer,
  type Summarizer,
  type SummaryResult,
} from '../../src/compaction/index.js';
import { runMain } from '../cli/support/inproc.js';
import { TestModel, type Reply, bigTool, call, fail, ofType, providerCount, say, testAgent, textOf, usageFor } from './helpers.js';
import { deferred } from '../agent/helpers.js';

const SUMMARY = 'The user asked to read notes.md; it holds lorem ipsum.';
const PROMPT = 'Please read notes.md and tell me what it says.';

/** Turn 1: a read and an answer; turn 2: a short exchange. */
async function twoTurns(
  summaries: Reply[] = [(req) => textResponse(SUMMARY, { usage: usageFor(req) })],
  opts: Parameters<typeof compaction>[0] = {},
) {
  const model = new TestModel([call('c1', 'read', { path: 'notes.md' }), say('It is lorem ipsum.'), say('Nothing else.')], summaries);
  const agent = testAgent(model, { compaction: { auto: false, retainTokens: 50, ...opts }, agent: { tools: [bigTool(3000)] } });
  agent.prompt(PROMPT);
  await agent.whenIdle();
  agent.prompt('Anything else?');
  await agent.whenIdle();
  return { agent, model };
}

describe('the bracket', () => {
  it('start, summary, the replacing checkpoint right after it, end: every field', async () => {
    const { agent, model } = await twoTurns();
    const s = agent.session;
    const nodes = s.surface.nodes;
    const [u1, a1, r1] = nodes as [number, number, number];
    const before = s.length;
    const result = await compactNow(agent);
    expect(result).not.toBeNull();
    const [start, summary, replace, end] = s.events.slice(before);

    expect(start!.type).toBe('compaction/start');
    const id = (start!.data as { compactionId: string }).compactionId;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(start!.data).toEqual({ compactionId: id, turn: null });

    // The span: prompt, call and result (~770 tokens); the retained tail (answer, prompt, answer) fits 50.
    const readOutput = `notes.md: ${'lorem ipsum dolor '.repeat(167).slice(0, 3000)}`;
    const args = JSON.stringify({ path: 'notes.md' });
    const tokens = 4 + Math.ceil(PROMPT.length / 4) + (4 + 4 + 1 + Math.ceil(args.length / 4)) + (4 + 4 + Math.ceil(readOutput.length / 4));
    expect(summary!.type).toBe('compaction/summary');
    expect(summary!.data).toEqual({
      compactionId: id,
      summary: [{ type: 'text', text: SUMMARY }],
      shadowedRange: { start: u1, end: r1 },
      shadowedSeqs: [u1, a1, r1],
      shadowedTokenCount: tokens,
      provider: 'test',
      model: 'm1',
      maxTokens: 8192,
      usage: { inputTokens: providerCount(model.summaries[0]!), outputTokens: 7 },
      rawOutput: [{ type: 'text', text: SUMMARY }],
      llmStreamCall: true,
    });

    expect(replace!.type).toBe('user/message');
    expect(replace!.seq).toBe(summary!.seq + 1);
    expect(replace!.surfaceOp).toEqual({ op: 'replace', start: u1, end: r1 });
    expect(replace!.sourceEventSeqs).toEqual([start!.seq, summary!.seq, u1, a1, r1]);
    const msg = replace!.data as { id: string };
    expect(replace!.data).toEqual({
      id: msg.id,
      role: 'user',
      content: [
        { type: 'text', text: `${CHECKPOINT_PREAMBLE}\n\n<compacted-summary>` },
        { type: 'text', text: SUMMARY },
        { type: 'text', text: '</compacted-summary>' },
      ],
      source: { kind: 'plugin', plugin: 'compact', compactionId: id },
    });

    expect(end!.type).toBe('compaction/end');
    expect(end!.data).toEqual({ compactionId: id, turn: null });
    expect(s.length).toBe(before + 4);
    expect(result).toMatchObject({
      compactionId: id,
      startSeq: start!.seq,
      summarySeq: summary!.seq,
      replaceSeq: replace!.seq,
      endSeq: end!.seq,
      shadowedTokenCount: tokens,
    });

    // The history now starts with the checkpoint; the tail is verbatim.
    const derived = s.deriveMessages().toArray();
    expect(derived.map(textOf)).toEqual([
      `${CHECKPOINT_PREAMBLE}\n\n<compacted-summary>${SUMMARY}</compacted-summary>`,
      'It is lorem ipsum.',
      'Anything else?',
      'Nothing else.',
    ]);
  });

  it('the summariser saw the span verbatim, the same system prompt and tools, and the instruction last', async () => {
    const { agent, model } = await twoTurns();
    const spanMessages = agent.session.deriveMessages().toArray().slice(0, 3);
    await compactNow(agent);
    const req = model.summaries[0]!;
    const lastConversation = model.conversation.at(-1)!;
    expect(req.purpose).toBe('compaction');
    expect(req.provider).toBe('test');
    expect(req.model).toBe('m1');
    expect(req.maxTokens).toBe(8192);
    expect(req.system).toBe(lastConversation.system);
    expect(req.tools).toEqual(lastConversation.tools);
    expect(req.messages.slice(0, 3)).toEqual(spanMessages);
    expect(req.messages).toHaveLength(4);
    expect(textOf(req.messages.at(3)!)).toBe(SUMMARY_INSTRUCTION);
  });

  it('the next request shows the checkpoint in place of the span, and the loop accepts it', async () => {
    const { agent, model } = await twoTurns();
    await compactNow(agent);
    model.push(say('Still here.'));
    agent.prompt('Go on.');
    await agent.whenIdle();
    const last = model.conversation.at(-1)!;
    expect(last.messages.map(textOf)).toEqual([
      `${CHECKPOINT_PREAMBLE}\n\n<compacted-summary>${SUMMARY}</compacted-summary>`,
      'It is lorem ipsum.',
      'Anything else?',
      'Nothing else.',
      'Go on.',
    ]);
    expect(ofType(agent.session.events, 'turn/end').at(-1)!.data.reason).toEqual({ kind: 'completed' });
  });

  it('the log reloads through JSONL unchanged and passes dsh log check', async () => {
    const { agent } = await twoTurns();
    await compactNow(agent);
    const s = agent.session;
    const text = encodeJsonl(s.header, s.events);
    const reloaded = loadJsonl(text).session;
    expect(reloaded.events.slice(0, s.length)).toEqual(s.events);
    expect(reloaded.deriveMessages().toArray()).toEqual(s.deriveMessages().toArray());
    expect(reloaded.surface.replaceGeneration).toBe(1);
    const file = join(mkdtempSync(join(tmpdir(), 'dsh-compaction-')), 'session.jsonl');
    writeFileSync(file, text);
    const r = await runMain(['log', 'check', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/: ok · \d+ events in \d+ rows · 2 turns · 3 steps · 4 messages\n$/);
  });
});

describe('the lock', () => {
  function gated(): { summarizer: Summarizer; release: (r: SummaryResult) => void; called: Promise<void> } {
    const gate = deferred<SummaryResult>();
    const called = deferred();
    return {
      summarizer: () => {
        called.resolve();
        return gate.promise;
      },
      release: gate.resolve,
      called: called.promise,
    };
  }
  const ok: SummaryResult = { summary: [{ type: 'text', text: 'short' }], provider: 'test', model: 'm1' };

  it('a second compaction while one is open is refused, and the log shows who holds the lock', async () => {
    const g = gated();
    const { agent } = await twoTurns([], { summarizer: g.summarizer });
    const first = compactNow(agent);
    await g.called;
    const open = openCompaction(agent.session);
    expect(open?.data.turn).toBeNull();
    const err = await compactNow(agent).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompactionError);
    expect((err as CompactionError).code).toBe('BUSY');
    expect((err as CompactionError).message).toContain(open!.data.compactionId);
    g.release(ok);
    const done = await first;
    expect(done?.compactionId).toBe(open!.data.compactionId);
    expect(openCompaction(agent.session)).toBeUndefined();
    expect(ofType(agent.session.events, 'compaction/start')).toHaveLength(1);
  });

  it('an unmatched start left by a crash is stale once the session is reloaded (after session/end-seed)', async () => {
    const g = gated();
    const { agent } = await twoTurns([], { summarizer: g.summarizer });
    void compactNow(agent);
    await g.called;
    // The process dies here: the log ends with an open compaction/start.
    const crashed = encodeJsonl(agent.session.header, agent.session.events);
    const session = loadJsonl(crashed).session;
    const seed = ofType(session.events, 'session/end-seed');
    const start = ofType(session.events, 'compaction/start')[0]!;
    expect(seed).toHaveLength(1);
    expect(start.seq).toBeLessThan(seed[0]!.seq);
    expect(openCompaction(session)).toBeUndefined();

    const model = new TestModel([], [(req) => textResponse('Resumed summary.', { usage: usageFor(req) })]);
    const resumed = createAgent({
      model: 'test:m1',
      adapters: model,
      session,
      retry: false,
      tools: [bigTool(3000)],
      plugins: [compaction({ auto: false, retainTokens: 50 })],
    });
    const r = await compactNow(resumed);
    expect(r?.summary).toEqual([{ type: 'text', text: 'Resumed summary.' }]);
    // An open start after the seed end does block.
    session.append('compaction/start', { compactionId: 'live-one', turn: null });
    await expect(compactNow(resumed)).rejects.toMatchObject({ code: 'BUSY' });
    g.release(ok);
  });

  it('a manual compaction is refused while a turn runs', async () => {
    const model = new TestModel([() => new Promise(() => undefined)]);
    const agent = testAgent(model);
    agent.prompt('hang');
    await expect(compactNow(agent)).rejects.toMatchObject({ code: 'NOT_IDLE' });
    agent.cancel();
    await agent.whenIdle();
  });
});

describe('a failing summariser', () => {
  it('closes the bracket with the error and leaves the history exactly as it was', async () => {
    const { agent } = await twoTurns([fail({ code: 'SERVER', message: 'the summariser is down' })]);
    const s = agent.session;
    const nodes = s.surface.nodes;
    const history = s.deriveMessages().toArray();
    const before = s.length;
    const err = await compactNow(agent).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompactionError);
    expect((err as CompactionError).code).toBe('SUMMARY_FAILED');
    expect((err as CompactionError).failure).toEqual({ code: 'SERVER', message: 'the summariser is down' });
    const added = s.events.slice(before);
    expect(added.map((e) => e.type)).toEqual(['compaction/start', 'compaction/end']);
    const id = (added[0]!.data as { compactionId: string }).compactionId;
    expect(added[1]!.data).toEqual({ compactionId: id, turn: null, error: 'SUMMARY_FAILED: the summariser is down [SERVER]' });
    expect(s.surface.nodes).toEqual(nodes);
    expect(s.surface.replaceGeneration).toBe(0);
    expect(s.deriveMessages().toArray()).toEqual(history);
    expect(openCompaction(s)).toBeUndefined();
  });

  it('a summary with no text (only a tool call) is refused the same way', async () => {
    const { agent } = await twoTurns([
      (req) => toolCallResponse([{ id: 'x', name: 'read', args: { path: 'y' } }], { usage: usageFor(req) }),
    ]);
    await expect(compactNow(agent)).rejects.toMatchObject({ code: 'SUMMARY_EMPTY' });
    expect(ofType(agent.session.events, 'compaction/end')[0]!.data.error).toMatch(/^SUMMARY_EMPTY: /);
    expect(agent.session.surface.replaceGeneration).toBe(0);
  });

  it('a summary no smaller than its span is refused', async () => {
    const { agent } = await twoTurns([(req) => textResponse('x'.repeat(20_000), { usage: usageFor(req) })]);
    await expect(compactNow(agent)).rejects.toMatchObject({ code: 'SUMMARY_NOT_SMALLER' });
    expect(agent.session.surface.replaceGeneration).toBe(0);
  });
});

describe('the /compact command', () => {
  it('records command/run, a manual bracket carrying the command id, and command/done', async () => {
    const { agent } = await twoTurns();
    const before = agent.session.length;
    const out = await runCompactCommand(agent);
    const added = agent.session.events.slice(before);
    expect(added.map((e) => e.type)).toEqual([
      'command/run',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'command/done',
    ]);
    const cmd = out.commandId;
    expect(added[0]!.data).toEqual({ commandId: cmd, name: 'compact', source: { kind: 'user' } });
    const id = out.result!.compactionId;
    expect(added[1]!.data).toEqual({ compactionId: id, sourceCommandId: cmd, turn: null });
    expect(added[2]!.data).toMatchObject({ compactionId: id, sourceCommandId: cmd });
    expect((added[3]!.data as { source: unknown }).source).toEqual({
      kind: 'plugin',
      plugin: 'compact',
      compactionId: id,
      sourceCommandId: cmd,
    });
    expect(added[4]!.data).toEqual({ compactionId: id, sourceCommandId: cmd, turn: null });
    expect(added[5]!.data).toEqual({ commandId: cmd, kind: 'success', text: out.text });
    expect(out.text).toMatch(/^compacted 3 message\(s\) \(~\d+ tokens\) into a summary \(~\d+ tokens\)$/);
  });

  it('a session too short to compact says so and changes no history', async () => {
    const model = new TestModel([say('Hi.')]);
    const agent = testAgent(model);
    agent.prompt('Hello');
    await agent.whenIdle();
    const out = await runCompactCommand(agent);
    expect(out.result).toBeNull();
    expect(out.text).toMatch(/^nothing to compact/);
    expect(ofType(agent.session.events, 'compaction/start')).toEqual([]);
    expect(ofType(agent.session.events, 'command/done')[0]!.data).toMatchObject({ kind: 'success' });
  });

  it('a failure is reported in words and recorded as an error outcome', async () => {
    const { agent } = await twoTurns([fail({ code: 'SERVER', message: 'down' })]);
    const out = await runCompactCommand(agent);
    expect(out.error?.code).toBe('SUMMARY_FAILED');
    expect(out.text).toBe('compaction failed: down [SERVER] [SUMMARY_FAILED]');
    expect(ofType(agent.session.events, 'command/done')[0]!.data).toMatchObject({ kind: 'error', text: out.text });
  });
});

describe("the summariser's request is checked as recorded (issue 12 item 2)", () => {
  const changes: [string, (r: GenerateRequest) => GenerateRequest, RegExp][] = [
    [
      'a message added to the span',
      (r) => ({
        ...r,
        messages: [{ id: 'x', role: 'user', content: [{ type: 'text', text: 'unrecorded' }], source: { kind: 'user' } }, ...r.messages],
      }),
      /input is not recorded .*messages/,
    ],
    [
      'the instruction rewritten',
      (r) => ({
        ...r,
        messages: [...r.messages.slice(0, -1), { ...(r.messages.at(-1) as UserMessage), content: [{ type: 'text', text: 'say hi' }] }],
      }),
      /input is not recorded .*messages\[\d+\]\.content/,
    ],
    ['another model', (r) => ({ ...r, model: 'm2' }), /summary request's model differs/],
    ['another system prompt', (r) => ({ ...r, system: 'Be terse.' }), /summary request's system differs/],
    ['a stop sequence', (r) => ({ ...r, stop: ['###'] }), /summary request's stop differs/],
    ['another cap', (r) => ({ ...r, maxTokens: 99_999 }), /summary request's maxTokens differs/],
  ];
  for (const [what, change, message] of changes) {
    it(`refuses ${what} by llm/stream middleware: the compaction fails with INVARIANT and the history stays`, async () => {
      const { agent, model } = await twoTurns();
      agent.on('llm/stream', (req, next) => next(req.purpose === 'compaction' ? change(req) : req));
      const history = agent.session.deriveMessages().toArray();
      const err = await compactNow(agent).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CompactionError);
      expect((err as CompactionError).code).toBe('SUMMARY_FAILED');
      expect((err as CompactionError).failure?.code).toBe('INVARIANT');
      expect((err as CompactionError).message).toMatch(message);
      expect(model.summaries).toEqual([]);
      expect(agent.session.deriveMessages().toArray()).toEqual(history);
    });
  }

  it('passes a middleware that changes nothing, and is off with invariants: false', async () => {
    const { agent, model } = await twoTurns();
    agent.on('llm/stream', (req, next) => next({ ...req }));
    expect(await compactNow(agent)).not.toBeNull();
    expect(model.summaries).toHaveLength(1);

    const model2 = new TestModel(
      [call('c1', 'read', { path: 'notes.md' }), say('It is lorem ipsum.')],
      [(req) => textResponse(SUMMARY, { usage: usageFor(req) })],
    );
    const off = testAgent(model2, { compaction: { auto: false, retainTokens: 50 }, agent: { tools: [bigTool(3000)], invariants: false } });
    off.prompt(PROMPT);
    await off.whenIdle();
    off.on('llm/stream', (req, next) => next(req.purpose === 'compaction' ? { ...req, system: 'Be terse.' } : req));
    expect(await compactNow(off)).not.toBeNull();
    expect(model2.summaries[0]!.system).toBe('Be terse.');
  });

  it('refuses a span handed to the summariser that is not the recorded one, before any model call', async () => {
    const { agent, model } = await twoTurns();
    const header = agent.session.requestHeader();
    const nodes = agent.session.surface.nodes;
    const err = await modelSummarizer({
      agent,
      compactionId: 'c',
      messages: [],
      shadowedSeqs: nodes.slice(0, 2),
      header,
      maxTokens: 100,
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect((err as CompactionError).code).toBe('SUMMARY_FAILED');
    expect((err as CompactionError).failure?.code).toBe('INVARIANT');
    expect(model.summaries).toEqual([]);
  });
});
