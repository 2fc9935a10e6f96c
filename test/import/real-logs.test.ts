/**
 * The importers on real logs of other agents (../shared/fixtures/real, see its SOURCES.md). Every
 * expected figure (messages, calls and their pairing, token totals, costs, turns) is computed
 * here from the source file by plain code of its own, never copied from the importer's output.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, type SessionEvent } from '../../src/session/index.js';
import { importText, type ImportResult, type ImportedSession } from '../../src/import/index.js';
import { describeShared, sharedPath } from '../support/shared.js';

type O = Record<string, any>;

const real = (p: string): string => sharedPath('fixtures', 'real', p);
const text = (p: string): string => readFileSync(real(p), 'utf8');
const rows = (p: string): O[] =>
  text(p)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as O);
const load = (p: string): ImportResult => importText(text(p), { file: p })!;

function events(s: ImportedSession, type: string): SessionEvent[] {
  return s.session.events.filter((e) => e.type === type);
}
const callIds = (s: ImportedSession): string[] => events(s, 'tool/call').map((e) => (e.data as O).callId as string);
const resultIds = (s: ImportedSession): string[] => events(s, 'tool/result').map((e) => (e.data as O).message.source.callId as string);
function usageSum(s: ImportedSession): { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number } {
  const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  for (const e of events(s, 'assistant/message')) {
    const u = (e.data as O).usage as O | undefined;
    if (!u) continue;
    t.input += u.inputTokens;
    t.output += u.outputTokens;
    t.cacheRead += u.cacheReadTokens ?? 0;
    t.cacheWrite += u.cacheWriteTokens ?? 0;
    t.reasoning += u.reasoningTokens ?? 0;
  }
  return t;
}
const endKinds = (s: ImportedSession): string[] => events(s, 'turn/end').map((e) => (e.data as O).reason.kind as string);

/** Each imported session is an ordinary dsh log: written and read back by the codec unchanged. */
function roundTrips(s: ImportedSession): void {
  const written = encodeJsonl(s.header, s.session.events.slice(0, s.eventCount));
  const back = loadJsonl(written);
  expect(back.eventCount).toBe(s.eventCount);
  expect(back.repaired).toEqual([]);
  expect(back.session.deriveMessages().toArray()).toEqual(s.session.deriveMessages().toArray());
}

describeShared('Claude Code transcripts', () => {
  for (const f of [
    'claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
    'claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl',
  ]) {
    it(`${f}: responses, calls, results, usage and sidechains match the rows`, () => {
      const src = rows(f);
      const r = load(f);
      expect(r.format.id).toBe('claude-code');
      const main = r.sessions[0]!;
      const isMain = (o: O): boolean => o.isSidechain !== true && o.type !== 'summary';
      const mainRows = src.filter(isMain);
      // Responses: distinct message ids of assistant rows; usage: the last row of each id.
      const lastUsage = new Map<string, O>();
      for (const o of mainRows) if (o.type === 'assistant') lastUsage.set(o.message.id, o.message.usage);
      expect(events(main, 'assistant/message')).toHaveLength(lastUsage.size);
      let input = 0,
        output = 0,
        cr = 0,
        cw = 0;
      for (const u of lastUsage.values()) {
        input += u.input_tokens;
        output += u.output_tokens;
        cr += u.cache_read_input_tokens ?? 0;
        cw += u.cache_creation_input_tokens ?? 0;
      }
      expect(usageSum(main)).toMatchObject({ input, output, cacheRead: cr, cacheWrite: cw });
      const uses = mainRows
        .filter((o) => o.type === 'assistant')
        .flatMap((o) => o.message.content.filter((b: O) => b.type === 'tool_use').map((b: O) => b.id as string));
      const results = mainRows
        .filter((o) => o.type === 'user' && Array.isArray(o.message.content))
        .flatMap((o) => o.message.content.filter((b: O) => b.type === 'tool_result').map((b: O) => b.tool_use_id as string));
      expect(callIds(main)).toEqual(uses);
      expect(resultIds(main)).toEqual(results);
      // Prompts: user rows with text that are neither tool results nor meta.
      const prompts = mainRows.filter(
        (o) =>
          o.type === 'user' &&
          o.isMeta !== true &&
          (typeof o.message.content === 'string' || o.message.content.every((b: O) => b.type === 'text')),
      );
      expect(events(main, 'turn/start')).toHaveLength(prompts.length);

      // Sidechains: one child per chain root, each a subagent of the main session.
      const side = src.filter((o) => o.isSidechain === true);
      const roots = side.filter((o) => o.parentUuid === null || !side.some((p) => p.uuid === o.parentUuid));
      expect(r.sessions).toHaveLength(1 + roots.length);
      const sideIds = new Set(side.filter((o) => o.type === 'assistant').map((o) => o.message.id as string));
      const childResponses = r.sessions.slice(1).reduce((n, c) => n + events(c, 'assistant/message').length, 0);
      expect(childResponses).toBe(sideIds.size);
      const taskCalls = mainRows
        .filter((o) => o.type === 'assistant')
        .flatMap((o) => o.message.content.filter((b: O) => b.type === 'tool_use' && b.name === 'Task').map((b: O) => b.id as string));
      const links = events(main, 'import/child-session').map((e) => (e.data as O).callId);
      expect(links.sort()).toEqual(taskCalls.sort());
      for (const c of r.sessions.slice(1)) {
        expect(c.header).toMatchObject({ parentSession: main.header.id, origin: 'subagent', delegationDepth: 1 });
        expect(callIds(c).sort()).toEqual(resultIds(c).sort());
      }
      for (const s of r.sessions) roundTrips(s);
    });
  }
});

describeShared('Codex rollouts', () => {
  const big = 'localpush-codex/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl';
  it(`${big}: turns, calls paired by id, compaction and the cumulative token total`, () => {
    const src = rows(big);
    const s = load(big).sessions[0]!;
    const item = (t: string): O[] => src.filter((o) => o.type === 'response_item' && o.payload.type === t).map((o) => o.payload);
    const ev = (t: string): O[] => src.filter((o) => o.type === 'event_msg' && o.payload.type === t).map((o) => o.payload);
    expect(events(s, 'turn/start')).toHaveLength(ev('task_started').length);
    expect(endKinds(s).filter((k) => k === 'completed')).toHaveLength(ev('task_complete').length);
    const calls = [...item('function_call'), ...item('custom_tool_call')].map((p) => p.call_id as string);
    const outputs = [...item('function_call_output'), ...item('custom_tool_call_output')].map((p) => p.call_id as string);
    const hosted = item('web_search_call').length;
    expect(
      callIds(s)
        .filter((id) => calls.includes(id))
        .sort(),
    ).toEqual([...calls].sort());
    expect(callIds(s)).toHaveLength(calls.length + hosted);
    expect(
      resultIds(s)
        .filter((id) => outputs.includes(id))
        .sort(),
    ).toEqual([...outputs].sort());
    expect(events(s, 'compaction/summary')).toHaveLength(src.filter((o) => o.type === 'compacted').length);
    // Usage: the last cumulative total is the sum of the per-call figures dsh keeps.
    const last = ev('token_count')
      .filter((p) => p.info)
      .at(-1)!.info.total_token_usage;
    expect(usageSum(s)).toMatchObject({
      input: last.input_tokens - last.cached_input_tokens,
      cacheRead: last.cached_input_tokens,
      output: last.output_tokens,
      reasoning: last.reasoning_output_tokens,
    });
    // Each distinct cumulative snapshot is one model call with usage.
    const snapshots = new Set(
      ev('token_count')
        .filter((p) => p.info)
        .map((p) => JSON.stringify(p.info.total_token_usage)),
    );
    expect(events(s, 'assistant/message').filter((e) => (e.data as O).usage)).toHaveLength(snapshots.size);
    roundTrips(s);
  });

  const cut = 'localpush-codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl';
  it(`${cut}: a rollout that stops after a call with no output ends its turn interrupted, the call unanswered`, () => {
    const src = rows(cut);
    const s = load(cut).sessions[0]!;
    const calls = src.filter((o) => o.type === 'response_item' && o.payload.type === 'function_call').map((o) => o.payload.call_id);
    expect(callIds(s)).toEqual(calls);
    expect(resultIds(s)).toEqual([]);
    expect(endKinds(s)).toEqual(['interrupted']);
    expect(s.notes.join(' ')).toMatch(/ends in the middle of turn 1/);
    roundTrips(s);
  });

  it('agent-sessions-schema/codex/small.jsonl (a composite coverage file): reads, counts what it cannot map, round-trips', () => {
    const f = 'agent-sessions-schema/codex/small.jsonl';
    const s = load(f).sessions[0]!;
    const fields = s.losses.map((l) => l.field);
    expect(fields).toContain('row type world_state');
    expect(fields).toContain('event_msg guardian_assessment');
    roundTrips(s);
  });
});

describeShared('pi sessions', () => {
  for (const f of ['pi-mono/large-session.jsonl', 'pi-mono/before-compaction.jsonl']) {
    it(`${f}: messages, calls, results, usage, $ cost, compactions and aborted turns match the rows`, () => {
      const src = rows(f);
      const s = load(f).sessions[0]!;
      const msgs = src.filter((o) => o.type === 'message').map((o) => o.message);
      const assistants = msgs.filter((m) => m.role === 'assistant');
      expect(events(s, 'assistant/message')).toHaveLength(assistants.length);
      expect(events(s, 'turn/start')).toHaveLength(msgs.filter((m) => m.role === 'user').length);
      const calls = assistants.flatMap((m) => m.content.filter((b: O) => b.type === 'toolCall').map((b: O) => b.id as string));
      expect(callIds(s)).toEqual(calls);
      const results = msgs.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId as string);
      // A result pairs when its call is waiting in the same step; any other is kept as text, counted.
      const paired = resultIds(s);
      const unpaired = s.losses.find((l) => l.field === 'tool result pairing')?.count ?? 0;
      expect(paired.length + unpaired).toBe(results.length);
      const sum = (k: string): number => assistants.reduce((n, m) => n + (m.usage?.[k] ?? 0), 0);
      expect(usageSum(s)).toMatchObject({
        input: sum('input'),
        output: sum('output'),
        cacheRead: sum('cacheRead'),
        cacheWrite: sum('cacheWrite'),
      });
      const cost = assistants.reduce((n, m) => n + (m.usage?.cost?.total ?? 0), 0);
      const imported = events(s, 'import/cost').reduce((n, e) => n + ((e.data as O).usd as number), 0);
      expect(imported).toBeCloseTo(cost, 9);
      expect(events(s, 'compaction/summary')).toHaveLength(src.filter((o) => o.type === 'compaction').length);
      // Every turn with an aborted response ends aborted, unless it also failed (error outranks later).
      const abortedTurns = new Set<number>();
      let turn = 0;
      for (const m of msgs) {
        if (m.role === 'user') turn++;
        if (m.role === 'assistant' && m.stopReason === 'aborted') abortedTurns.add(turn);
      }
      expect(endKinds(s).filter((k) => k === 'aborted').length).toBeLessThanOrEqual(abortedTurns.size);
      expect(endKinds(s).filter((k) => k === 'aborted' || k === 'error').length).toBeGreaterThanOrEqual(abortedTurns.size);
      roundTrips(s);
    });
  }

  it('before-compaction.jsonl: each compaction replaces everything before its first kept entry', () => {
    const f = 'pi-mono/before-compaction.jsonl';
    const src = rows(f);
    const s = load(f).sessions[0]!;
    const comps = src.map((o, i) => ({ o, i })).filter((x) => x.o.type === 'compaction');
    const replaces = s.session.events.filter((e) => e.type === 'user/message' && typeof e.surfaceOp === 'object');
    expect(replaces).toHaveLength(comps.length);
    comps.forEach(({ o }, k) => {
      const summary = replaces[k]!;
      expect(((summary.data as O).content[0] as O).text).toBe(o.summary);
      // What it shadows (after the compaction/start and summary seqs) comes from rows before the kept entry.
      const shadowed = summary.sourceEventSeqs!.slice(2);
      expect(shadowed.length).toBeGreaterThan(0);
      for (const seq of shadowed) expect(s.lineOf(seq) ?? 0).toBeLessThanOrEqual(o.firstKeptEntryIndex);
    });
    // After the last one, the history starts with its summary, then the kept entry (a user message).
    const last = comps.at(-1)!.o;
    const history = s.session
      .deriveMessages()
      .toArray()
      .map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    expect(history[0]).toBe(last.summary);
    expect(history[1]).toBe(src[last.firstKeptEntryIndex]!.message.content[0].text);
  });
});

describeShared('OpenHands', () => {
  for (const f of ['openhands/basic.json', 'openhands/basic_interactions.json', 'openhands/wrong_initial_state.json']) {
    it(`${f}: prompts, one response per model response id, calls paired with observations, usage`, () => {
      const evs = JSON.parse(text(f)) as O[];
      const s = load(f).sessions[0]!;
      expect(events(s, 'turn/start').length).toBe(evs.filter((e) => e.source === 'user' && e.action === 'message').length);
      const responses = new Map<string, O>();
      for (const e of evs)
        if (e.tool_call_metadata?.model_response)
          responses.set(e.tool_call_metadata.model_response.id, e.tool_call_metadata.model_response);
      const agentMessages = evs.filter((e) => e.source === 'agent' && e.action === 'message' && !e.tool_call_metadata).length;
      expect(events(s, 'assistant/message')).toHaveLength(responses.size + agentMessages);
      const calls = [...responses.values()].flatMap((r) => r.choices[0].message.tool_calls.map((c: O) => c.id as string));
      expect(callIds(s).sort()).toEqual([...calls].sort());
      const observed = evs.filter((e) => e.observation && e.tool_call_metadata).map((e) => e.tool_call_metadata.tool_call_id as string);
      expect(resultIds(s).sort()).toEqual([...observed].sort());
      const prompt = [...responses.values()].reduce((n, r) => n + r.usage.prompt_tokens, 0);
      const completion = [...responses.values()].reduce((n, r) => n + r.usage.completion_tokens, 0);
      const u = usageSum(s);
      expect(u.input + u.cacheRead + u.cacheWrite).toBe(prompt);
      expect(u.output).toBe(completion);
      roundTrips(s);
    });
  }

  it('openhands/output.jsonl: one session per evaluation record, with the accumulated token usage', () => {
    const recs = rows('openhands/output.jsonl');
    const r = load('openhands/output.jsonl');
    expect(r.sessions.map((s) => s.header.id)).toEqual(recs.map((x) => x.instance_id));
    r.sessions.forEach((s, i) => {
      const rec = recs[i]!;
      const calls = rec.history.filter((e: O) => e.action && e.tool_call_metadata).map((e: O) => e.tool_call_metadata.tool_call_id);
      expect(callIds(s).sort()).toEqual([...new Set<string>(calls)].sort());
      const acc = rec.metrics.accumulated_token_usage;
      const totals = events(s, 'import/usage');
      const u = usageSum(s);
      // Either every response carried usage, or the record's accumulated total is kept as is.
      if (totals.length && (totals[0]!.data as O).usage)
        expect((totals[0]!.data as O).usage).toMatchObject({
          inputTokens: acc.prompt_tokens - acc.cache_read_tokens - acc.cache_write_tokens,
          outputTokens: acc.completion_tokens,
        });
      else expect(u.input + u.cacheRead + u.cacheWrite).toBe(acc.prompt_tokens);
      roundTrips(s);
    });
  });
});

describeShared('SWE-agent trajectories', () => {
  for (const f of [
    'swe-agent/swe-agent__test-repo-i1.traj',
    'swe-agent/function_calling_simple.traj',
    'swe-agent/marshmallow-code__marshmallow-1867.traj',
  ]) {
    it(`${f}: one response per assistant message, calls and observations, model_stats totals`, () => {
      const d = JSON.parse(text(f)) as O;
      const s = load(f).sessions[0]!;
      const assistants = d.history.filter((m: O) => m.role === 'assistant');
      expect(events(s, 'assistant/message')).toHaveLength(assistants.length);
      expect(callIds(s)).toHaveLength(assistants.filter((m: O) => m.tool_calls || (m.action && m.action.trim() !== '')).length);
      // The task is the first non-demo user message.
      const observations = d.history.filter((m: O) => m.role === 'tool' || (m.role === 'user' && !m.is_demo)).length - 1;
      const unpaired = s.losses.find((l) => l.field === 'tool result pairing')?.count ?? 0;
      expect(resultIds(s).length + unpaired).toBe(observations);
      expect(events(s, 'request/header')).toHaveLength(1);
      const stats = d.info?.model_stats;
      const totals = events(s, 'import/usage');
      if (stats) {
        expect(totals).toHaveLength(1);
        expect(totals[0]!.data).toMatchObject({
          usage: { inputTokens: stats.tokens_sent, outputTokens: stats.tokens_received },
          usd: stats.instance_cost,
          apiCalls: stats.api_calls,
        });
      } else expect(totals).toHaveLength(0);
      roundTrips(s);
    });
  }
});
