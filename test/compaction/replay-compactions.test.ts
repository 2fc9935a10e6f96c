/**
 * Compacted sessions and replay. The real dsh log with a compaction (overflow recovery) still
 * loads and derives the history it did; `replaySession` re-runs it with `replayCompactions`
 * re-enacting the recorded bracket, and matches the recording with every request equal to the
 * recorded one. A session this harness compacted (pressure, overflow, manual) replays the same way.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { replaySession } from '../../src/replay/harness.js';
import { textResponse } from '../../src/llm/scripted.js';
import { compactNow, openCompaction, recordedBrackets } from '../../src/compaction/index.js';
import { describeShared, sharedPath } from '../support/shared.js';
import { TestModel, bigTool, call, fail, ofType, say, testAgent, textOf, usageFor, type Reply } from './helpers.js';

const FIXTURE = 'headless-agent__compaction-recovery.jsonl';

describeShared('the real dsh compaction log', () => {
  const text = (): string => readFileSync(sharedPath('fixtures', 'dsh', FIXTURE), 'utf8');

  it('loads, and derives the checkpoint in place of the premise', () => {
    const { session } = loadJsonl(text(), { placeholders: 'warn' });
    const derived = session.deriveMessages().toArray();
    expect(derived.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textOf(derived[0]!)).toMatch(
      new RegExp(
        '^This is an automatically generated checkpoint .*' +
          '<compacted-summary>The request established a durable compaction premise\\.</compacted-summary>$',
        's',
      ),
    );
    expect(textOf(derived[3]!)).toBe('COMPACTION RECOVERED');
    expect(session.surface.replacements).toEqual([{ seq: 21, start: 4, end: 4, shadowedSeqs: [4] }]);
    // Its bracket is closed, so it holds no lock.
    expect(openCompaction(session)).toBeUndefined();
    const summary = ofType(session.events, 'compaction/summary')[0]!;
    expect(summary.data.shadowedTokenCount).toBe(266);
    expect(summary.data.llmStreamCall).toBe(true);
  });

  it('its bracket sits after the first attempt of turn 1 step 2 (overflow recovery)', () => {
    const { session } = loadJsonl(text(), { placeholders: 'warn' });
    const [b, ...rest] = recordedBrackets(session.events);
    expect(rest).toEqual([]);
    expect(b!.where).toEqual({ kind: 'attempt', turn: 1, step: 2, attempt: 1 });
    expect(b!.span).toMatchObject({ first: 0, last: 0 });
  });

  it('replays through replaySession with the bracket re-enacted: a match, every request as recorded', async () => {
    // replaySession installs replayCompactions itself.
    const r = await replaySession(text(), { mode: 'strict' });
    expect(r.notes).toEqual([]);
    expect(r.unsupported).toEqual([]);
    expect(r.comparison.differences).toEqual([]);
    expect(r.divergences).toEqual([]);
    expect(r.comparison.counts.replayed).toEqual(r.comparison.counts.recorded);
    expect(r.comparison.notReproduced.map((t) => t.type)).toEqual(['session/title']);
    expect(r.session.deriveMessages().toArray().map(textOf)).toEqual(
      loadJsonl(text(), { placeholders: 'warn' }).session.deriveMessages().toArray().map(textOf),
    );
  });

  it('without the re-enactment the same replay parts from the recording (the plugin is what makes it match)', async () => {
    const r = await replaySession(text(), { mode: 'report', compactions: false });
    expect(r.comparison.differences.length).toBeGreaterThan(0);
  });
});

describe('a session compacted here replays', () => {
  const summaries = (n: number): Reply[] =>
    Array.from({ length: n }, (_, i) => (req) => textResponse(`Summary ${i + 1}.`, { usage: usageFor(req) }));

  it('pressure (between steps), overflow (after an attempt) and manual (between turns) brackets', async () => {
    const talk: Reply[] = [];
    for (let i = 1; i <= 10; i++) talk.push(call(`c${i}`, 'read', { path: `f${i}` }));
    talk.push(fail({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' }), say('Read them all.'));
    const model = new TestModel(talk, summaries(10), { contextWindow: 4000 });
    const agent = testAgent(model, { agent: { tools: [bigTool(2000)] } });
    agent.prompt('Read f1 to f10.');
    await agent.whenIdle();
    model.push(call('c11', 'read', { path: 'f11' }), say('And f11.'));
    agent.prompt('Read f11 as well.');
    await agent.whenIdle();
    const manual = await compactNow(agent);
    expect(manual).not.toBeNull();

    const events = agent.session.events;
    const kinds = recordedBrackets(events).map((b) => b.where.kind);
    expect(kinds).toContain('pre-step');
    expect(kinds).toContain('attempt');
    expect(kinds.at(-1)).toBe('idle');
    expect(ofType(events, 'compaction/end').every((e) => e.data.error === undefined)).toBe(true);

    const recording = encodeJsonl(agent.session.header, events);
    const r = await replaySession(recording, { mode: 'strict' });
    expect(r.notes).toEqual([]);
    expect(r.comparison.differences).toEqual([]);
    expect(r.divergences).toEqual([]);
    expect(r.comparison.notReproduced).toEqual([]);
    expect(r.comparison.extra).toEqual([]);
    expect(r.session.deriveMessages().toArray().map(textOf)).toEqual(agent.session.deriveMessages().toArray().map(textOf));
  });
});
