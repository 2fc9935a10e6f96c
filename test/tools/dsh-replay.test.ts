/**
 * Recorded dsh sessions against the built-in tools: every argument shape dsh's model produced
 * for a tool we ship must validate, and sessions whose starting files we know are replayed
 * call for call through the agent, with our results compared to dsh's recorded results.
 */
import { expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { isJsonSchemaParameters } from '../../src/tools/registry.js';
import { ScriptedAdapter, textResponse, toolCallResponse, type ScriptEntry } from '../../src/llm/scripted.js';
import { BUILTIN_TOOL_NAMES, codingTools } from '../../src/tools/coding-tools.js';
import { describeShared, sharedPath } from '../support/shared.js';
import { agentFor, tempDir, writeTree } from './helpers.js';

interface Row {
  type: string;
  data: Record<string, unknown>;
}

function rows(file: string): Row[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row);
}

interface RecordedCall {
  turn: number;
  step: number;
  callId: string;
  name: string;
  arguments: string;
  result?: { text: string; isError: boolean };
}

function recordedCalls(file: string): RecordedCall[] {
  const calls = new Map<string, RecordedCall>();
  for (const r of rows(file)) {
    if (r.type === 'tool/call') {
      const d = r.data as unknown as RecordedCall;
      calls.set(d.callId, { turn: d.turn, step: d.step, callId: d.callId, name: d.name, arguments: d.arguments });
    } else if (r.type === 'tool/result') {
      const block = (r.data.message as { content: { toolCallId: string; isError?: boolean; content: { type: string; text?: string }[] }[] })
        .content[0]!;
      const c = calls.get(block.toolCallId);
      if (c) c.result = { text: block.content.map((b) => b.text ?? '').join(''), isError: block.isError === true };
    }
  }
  return [...calls.values()];
}

const fixtureDir = (): string => sharedPath('fixtures', 'dsh');
const builtin = new Set<string>(BUILTIN_TOOL_NAMES);

/** Scenarios whose starting workspace the prompts and results pin down. */
const SCENARIOS: Record<string, Record<string, string>> = {
  'acp-agent__fs-read.jsonl': { 'greeting.txt': 'hello\n' },
  'acp-agent__fs-read-window.jsonl': {
    'big.txt': `${['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].map((w) => `line ${w}`).join('\n')}\n`,
  },
  'acp-agent__fs-edit.jsonl': { 'config.txt': 'mode=DEBUG\nlevel=info\n' },
  'acp-agent__fs-write.jsonl': {},
  'acp-agent__fs-write-overwrite.jsonl': { 'data.txt': 'original contents\n' },
  'acp-agent__fs-delete-recreate.jsonl': { 'deleted.txt': 'original\n' },
  'acp-agent__workspace-edit.jsonl': { 'greeting.txt': 'hello\n' },
  'acp-agent__todo-write.jsonl': {},
  'acp-agent__bash-tool-turn.jsonl': {},
  'acp-agent__tool-call-turn.jsonl': {},
  'jsonrpc-agent__bash-tool.jsonl': {},
};

describeShared('recorded dsh sessions against the built-in tools', () => {
  it('every recorded argument shape for a built-in tool validates', async () => {
    const agent = agentFor(tempDir(), [codingTools()]);
    let checked = 0;
    const failures: string[] = [];
    for (const f of readdirSync(fixtureDir()).filter((n) => n.endsWith('.jsonl'))) {
      for (const c of recordedCalls(`${fixtureDir()}/${f}`)) {
        if (!builtin.has(c.name)) continue;
        const params = agent.tools.get(c.name)!.parameters;
        if (!isJsonSchemaParameters(params) || !params.validate) throw new Error(`${c.name} has no validator`);
        const args = c.arguments.replaceAll('{{cwd}}', '/ws');
        const r = await params.validate(JSON.parse(args));
        checked++;
        if (!r.ok) failures.push(`${f} ${c.callId} ${c.name} ${args}: ${r.error}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(40);
  });

  for (const [fixture, files] of Object.entries(SCENARIOS)) {
    it(`replays ${fixture} with dsh's results`, async () => {
      const calls = recordedCalls(`${fixtureDir()}/${fixture}`).filter((c) => builtin.has(c.name));
      expect(calls.length).toBeGreaterThan(0);
      const root = tempDir();
      writeTree(root, files);
      const steps = new Map<string, RecordedCall[]>();
      for (const c of calls) steps.set(`${c.turn}/${c.step}`, [...(steps.get(`${c.turn}/${c.step}`) ?? []), c]);
      const script: ScriptEntry[] = [...steps.values()].map((cs) =>
        toolCallResponse(cs.map((c) => ({ id: c.callId, name: c.name, raw: c.arguments.replaceAll('{{cwd}}', root) }))),
      );
      script.push(textResponse('DONE'));
      const agent = agentFor(root, [codingTools()], { adapter: new ScriptedAdapter(script) });
      agent.prompt('replay');
      await agent.whenIdle();

      const ours = new Map(
        agent.session.events
          .filter((e) => e.type === 'tool/result')
          .map((e) => {
            const b = (e.data as { message: { content: { toolCallId: string; isError: boolean; content: { text?: string }[] }[] } }).message
              .content[0]!;
            return [b.toolCallId, { text: b.content.map((x) => x.text ?? '').join(''), isError: b.isError }] as const;
          }),
      );
      for (const c of calls) {
        const expected = { text: c.result!.text.replaceAll('{{cwd}}', root), isError: c.result!.isError };
        expect(ours.get(c.callId), `${c.name} ${c.arguments}`).toEqual(expected);
      }
      if (fixture.includes('todo-write')) {
        const todos = agent.session.events.filter((e) => e.type === 'todo/write').map((e) => e.data);
        const recorded = rows(`${fixtureDir()}/${fixture}`)
          .filter((r) => r.type === 'todo/write')
          .map((r) => r.data);
        expect(todos).toEqual(recorded);
      }
    });
  }
});
