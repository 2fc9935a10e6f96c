/**
 * `dsh log show`: the timeline's structure and counts, each checked against values computed in
 * the test from the raw log (not by the code under test).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { examplePath, exampleLines, exampleText, lineOf, scratch } from './support/files.js';
import { chunkRuns, parseRaw, type RawEvent } from './support/raw-log.js';
import type { Run } from './support/run.js';
import { dshIn as dsh } from './support/inproc.js';

const file = scratch();
const { events } = parseRaw(exampleText());

/** The timeline line for `seq`: "<seq>  <indent><text>". */
function lineFor(out: string, seq: number): { indent: number; text: string } {
  const m = out
    .split('\n')
    .map((l) => /^\s*(\d+) {2}( *)(.*)$/.exec(l))
    .find((x) => x && Number(x[1]) === seq);
  if (!m) throw new Error(`no timeline line for seq ${seq}`);
  return { indent: m[2]!.length / 2, text: m[3]! };
}

const of = (type: string): RawEvent[] => events.filter((e) => e.type === type);

describe('dsh log show on the example', () => {
  let r: Run;
  beforeAll(async () => {
    r = await dsh(['log', 'show', examplePath]);
  });

  it('exits 0 and heads the timeline with the session facts', () => {
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const header = r.stdout.split('\n').slice(0, 2);
    expect(header[0]).toBe('session 5f0c1e2a-7b3d-4c8e-9a61-0d2f4b6c8e10 · created 2026-01-15T09:30:00.000Z · cwd /tmp/demo-repo');
    expect(header[1]).toMatch(
      new RegExp(`^${events.length} events in ${exampleLines().length - 1} rows · 2 turns · 6 steps · \\d+ messages in history$`),
    );
  });

  it('indents turns at 0, steps at 1 and their events at 2', () => {
    for (const e of of('turn/start')) expect(lineFor(r.stdout, e.seq)).toEqual({ indent: 0, text: `turn ${e.data.turn}` });
    for (const e of of('step/start')) expect(lineFor(r.stdout, e.seq)).toEqual({ indent: 1, text: `step ${e.data.step}` });
    for (const e of of('step/end')) expect(lineFor(r.stdout, e.seq)).toEqual({ indent: 1, text: `step ${e.data.step} end` });
    for (const e of of('turn/end'))
      expect(lineFor(r.stdout, e.seq)).toEqual({ indent: 0, text: `turn ${e.data.turn} end: ${e.data.reason.kind}` });
    for (const e of [...of('tool/call'), ...of('assistant/message')]) expect(lineFor(r.stdout, e.seq).indent).toBe(2);
  });

  it('collapses each chunk run to one line with its delta counts', () => {
    const runs = chunkRuns(events);
    expect(runs.length).toBe(of('assistant/message').length);
    for (const run of runs) {
      const line = lineFor(r.stdout, run.seq);
      expect(line.text.startsWith(`stream: ${run.deltas} · `)).toBe(true);
    }
    // No chunk other than a run's first has a line of its own.
    const chunkSeqs = new Set(of('assistant/chunk').map((e) => e.seq));
    const firsts = new Set(runs.map((x) => x.seq));
    const shown = r.stdout
      .split('\n')
      .map((l) => /^\s*(\d+) {2}/.exec(l)?.[1])
      .filter((s): s is string => s !== undefined)
      .map(Number);
    expect(shown.filter((s) => chunkSeqs.has(s) && !firsts.has(s))).toEqual([]);
  });

  it('shows each assistant message with its usage', () => {
    for (const e of of('assistant/message')) {
      const u = e.data.usage;
      expect(lineFor(r.stdout, e.seq).text).toContain(`assistant deepseek/deepseek-chat · in ${u.inputTokens} · out ${u.outputTokens}`);
      expect(lineFor(r.stdout, e.seq).text).toContain(`cache read ${u.cacheReadTokens}`);
    }
  });

  it('shows tool calls with callId and name, and results with status matched to the call', () => {
    for (const call of of('tool/call')) {
      expect(lineFor(r.stdout, call.seq).text).toMatch(new RegExp(`^tool call ${call.data.name} \\[${call.data.callId}\\] \\{`));
      const result = events.find((e) => e.type === 'tool/result' && e.data.message.source.callId === call.data.callId)!;
      const status = result.data.error ? `error ${result.data.error.code}` : 'ok';
      expect(lineFor(r.stdout, result.seq).text).toMatch(
        new RegExp(`^tool result ${call.data.name} \\[${call.data.callId}\\] ${status}: "`),
      );
    }
    expect(r.stdout).toContain('error FS_NOT_FOUND: "Error: cannot read "/tmp/demo-repo/docs/usage.md": not found"');
  });

  it('a result whose block says isError but that records no error object still shows as an error', async () => {
    // The example's failing read, with its `error` object removed: only the block's isError is left.
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"tool\/result".*FS_NOT_FOUND/);
    const e = JSON.parse(lines[n - 1]!) as { data: { error?: unknown; message: { content: { isError?: boolean }[] } } };
    delete e.data.error;
    expect(e.data.message.content[0]!.isError).toBe(true);
    lines[n - 1] = JSON.stringify(e);
    const p = file('iserror-only.jsonl', `${lines.join('\n')}\n`);
    const out = (await dsh(['log', 'show', p])).stdout;
    const seq = (JSON.parse(lines[n - 1]!) as { seq: number }).seq;
    expect(lineFor(out, seq).text).toMatch(/^tool result read \[[^\]]+\] error: "/);
  });

  it('shows user messages with their source, and the request header', () => {
    const [prompt, snapshot] = of('user/message');
    expect(lineFor(r.stdout, prompt!.seq).text).toBe('user (user): "Fix the typo in README.md"');
    expect(lineFor(r.stdout, snapshot!.seq).text).toMatch(/^user \(plugin runtime-context · snapshot\): "Current runtime context\./);
    const header = of('request/header')[0]!;
    expect(lineFor(r.stdout, header.seq).text).toBe(
      `request header deepseek/deepseek-chat (initial) · max 8192 tokens · system ${header.data.header.system.length} chars · 3 ` +
        'tools: grep, read, edit',
    );
    expect(lineFor(r.stdout, of('agent/inbox/spliced')[0]!.seq).text).toBe('inbox next-turn @0: +1 "Fix the typo in README.md"');
  });

  it("shows an inbox splice's inserted text that is not a string as the join writes it (payloads read defensively)", async () => {
    const lines = exampleLines();
    const n = lines.findIndex((l) => l.includes('"agent/inbox/spliced"') && l.includes('"inserted":[{'));
    const e = JSON.parse(lines[n]!) as { seq: number; data: { inserted: { content: unknown }[] } };
    e.data.inserted[0]!.content = [{ type: 'text', text: 42 }];
    lines[n] = JSON.stringify(e);
    const out = await dsh(['log', 'show', file('inbox-number.jsonl', `${lines.join('\n')}\n`)]);
    expect(out.stderr).toBe('');
    expect(lineFor(out.stdout, e.seq).text).toBe('inbox next-turn @0: +1 "42"');
  });

  it('truncates long text by default and not under --full', async () => {
    const answer = of('assistant/message').at(-1)!.data.message.content[0].text as string;
    expect(answer.length).toBeGreaterThan(72);
    expect(r.stdout).not.toContain(answer);
    expect(r.stdout).toContain(`${answer.slice(0, 40)}`);
    const full = await dsh(['log', 'show', '--full', examplePath]);
    expect(full.stdout).toContain(`text "${answer}"`);
  });

  it('--turn N shows that turn only', async () => {
    const t2 = await dsh(['log', 'show', '--turn', '2', examplePath]);
    expect(t2.code).toBe(0);
    const start = of('turn/start')[1]!.seq;
    const seqs = t2.stdout
      .split('\n')
      .map((l) => /^\s*(\d+) {2}/.exec(l)?.[1])
      .filter((s): s is string => s !== undefined)
      .map(Number);
    expect(seqs[0]).toBe(start);
    expect(seqs.at(-1)).toBe(events.length - 1);
    expect(t2.stdout).not.toMatch(/^\s*\d+ {2}turn 1$/m);
  });
});

describe('dsh log show on repaired and unusual logs', () => {
  it('marks the events crash repair added and the interrupted turn end', async () => {
    const lines = exampleLines();
    const cut = lineOf(lines, /"type":"tool\/call".*call_04_read/);
    const p = file('cut.jsonl', `${lines.slice(0, cut).join('\n')}\n`);
    const r = await dsh(['log', 'show', p]);
    expect(r.code).toBe(0);
    const callSeq = (JSON.parse(lines[cut - 1]!) as { seq: number }).seq;
    expect(lineFor(r.stdout, callSeq + 1).text).toMatch(
      /^tool result read \[call_04_read\] error TOOL_OUTCOME_UNKNOWN: .* \[crash repair\]$/,
    );
    expect(lineFor(r.stdout, callSeq + 3).text).toBe('turn 2 end: interrupted (closed by crash repair) [crash repair]');
    expect(r.stdout).toContain('the last turn was left open: crash repair added 3 events');
  });

  it('shows aborted causes, error turn ends and plugin events', async () => {
    const lines = exampleLines();
    const endLine = lineOf(lines, /"type":"turn\/end".*"turn":1/);
    lines[endLine - 1] = lines[endLine - 1]!.replace(
      '{"kind":"completed"}',
      '{"kind":"aborted","reason":{"kind":"hook","reason":"policy said stop"}}',
    );
    const last = lines.length;
    lines[last - 1] = lines[last - 1]!.replace(
      '{"kind":"completed"}',
      '{"kind":"error","error":{"message":"rate limited","code":"RATE_LIMIT","status":429}}',
    );
    const seq = parseRaw(`${lines.join('\n')}\n`).events.length;
    lines.push(JSON.stringify({ type: 'session/title', seq, time: 1, data: { title: 'Fix a typo' } }));
    lines.push(
      JSON.stringify({
        type: 'approval/asked',
        seq: seq + 1,
        time: 1,
        data: { id: 'a1', toolName: 'bash', reason: 'write outside the workspace' },
      }),
    );
    lines.push(JSON.stringify({ type: 'my-plugin/thing', seq: seq + 2, time: 1, data: { n: 1 }, ignorable: true }));
    const p = file('reasons.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'show', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s*\d+ {2}turn 1 end: aborted \(hook: policy said stop\)$/m);
    expect(r.stdout).toMatch(/^\s*\d+ {2}turn 2 end: error RATE_LIMIT \(HTTP 429\): rate limited$/m);
    expect(lineFor(r.stdout, seq).text).toBe('title "Fix a typo"');
    expect(lineFor(r.stdout, seq + 1).text).toBe('approval asked: bash "write outside the workspace"');
    expect(lineFor(r.stdout, seq + 2).text).toBe('my-plugin/thing (ignorable) {"n":1}');
  });

  it('refuses an unknown turn with a usage error', async () => {
    const r = await dsh(['log', 'show', '--turn', '9', examplePath]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(`dsh: ${examplePath}: --turn 9: the log has turns 1…2 [TURN_NOT_FOUND]`);
  });

  it('a log that does not load is one line on stderr and exit 1', async () => {
    const r = await dsh(['log', 'show', file('bad.jsonl', '{"type":"session"}\n')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^dsh: .*bad\.jsonl:1: error CORRUPT_LOG/);
  });
});
