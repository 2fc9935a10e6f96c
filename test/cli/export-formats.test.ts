/**
 * `dsh log export --format markdown|html|openai|anthropic`: transcripts and provider message
 * arrays. Expected figures are read from the raw log lines here, not from the code under test.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeJsonl } from '../../src/session/index.js';
import { runMain } from './support/inproc.js';
import { repoRoot, describeShared, sharedPath } from '../support/shared.js';
import { assistant, clockedSession, header, toolResult, user } from '../observability/support/build.js';

const example = `${repoRoot}/examples/fix-typo.jsonl`;
interface Raw {
  seq: number;
  type: string;
  data: Record<string, any>;
}
const rawEvents = (file: string): Raw[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as Raw)
    .filter((e) => typeof e.seq === 'number');

const dir = mkdtempSync(join(tmpdir(), 'dsh-export-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A log whose text tries to break out of a fence, a heading and the page. */
function hostileLog(): string {
  const c = clockedSession('sess-hostile');
  c.at(1).append('turn/start', { turn: 1 });
  c.at(2).append('step/start', { turn: 1, step: 1 });
  c.at(3).append('user/message', user('```\n# not a heading\n<script>alert(1)</script>\n````'), { surfaceOp: 'append' });
  c.at(4).append('request/header', header({ provider: 'deepseek', model: 'deepseek-chat' }, 'sys'));
  const call = { type: 'tool-call' as const, id: 'c<1>', name: 'bash', arguments: 'not json `' };
  c.at(5).append(
    'assistant/message',
    { turn: 1, step: 1, message: assistant([{ type: 'text', text: 'ok\u202e\u0007' }, call]) },
    { surfaceOp: 'append' },
  );
  c.at(6).append('tool/call', { turn: 1, step: 1, callId: 'c<1>', name: 'bash', arguments: 'not json `' });
  c.at(7).append(
    'tool/result',
    { turn: 1, step: 1, message: toolResult('c<1>', '</pre><img src=x onerror=alert(1)>', true) },
    { surfaceOp: 'append' },
  );
  const file = join(dir, 'hostile.jsonl');
  writeFileSync(file, encodeJsonl(c.session.header, c.session.events));
  return file;
}

describe('--format markdown', () => {
  it('has a section per turn, an entry per committed message, a call beside its result, and every turn end', async () => {
    const r = await runMain(['log', 'export', '--format', 'markdown', example]);
    expect(r.code).toBe(0);
    const raw = rawEvents(example);
    const turns = raw.filter((e) => e.type === 'turn/start').length;
    // A message event holds the message as its data (user/message) or under data.message.
    const messages = raw.filter((e) => e.data && typeof e.data === 'object' && ('message' in e.data || 'role' in e.data)).length;
    const calls = raw.filter((e) => e.type === 'tool/call').map((e) => e.data.callId as string);
    expect(r.stdout.match(/^## Turn \d+$/gm)).toHaveLength(turns);
    expect(r.stdout.match(/^### .* · seq \d+$/gm)).toHaveLength(messages);
    expect(r.stdout.match(/^\*Turn ended: /gm)).toHaveLength(raw.filter((e) => e.type === 'turn/end').length);
    for (const id of calls) {
      const esc = id.replace(/_/g, '\\_');
      expect(r.stdout).toContain(`(${esc}):`);
      expect(r.stdout).toContain(`Result of ${esc}`);
    }
  });

  it('keeps hostile text inside fences longer than any backtick run, with controls escaped', async () => {
    const r = await runMain(['log', 'export', '--format', 'markdown', hostileLog()]);
    expect(r.code).toBe(0);
    // The user text holds a run of 4 backticks: its fence is 5.
    expect(r.stdout).toContain('`````text\n```\n# not a heading\n<script>alert(1)</script>\n````\n`````\n');
    expect(r.stdout).toContain('ok\\u202e\\x07');
    expect(r.stdout).not.toContain('\u202e');
    expect(r.stdout).toContain('Tool call **bash** (c\\<1\\>)');
    // Arguments that are not JSON are shown as the model wrote them.
    expect(r.stdout).toContain('not json `');
    expect(r.stdout).toContain('(error)');
  });
});

describe('--format html', () => {
  it('escapes every piece of log text and loads or runs nothing', async () => {
    const r = await runMain(['log', 'export', '--format', 'html', hostileLog()]);
    expect(r.code).toBe(0);
    const page = r.stdout;
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(page).not.toMatch(/<script|<img/i);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(page).toContain('ok\\u202e\\x07');
    // One article per committed message, anchored by seq.
    expect(page.match(/<article id="seq-\d+">/g)).toHaveLength(3);
  });
});

describe('--format openai and anthropic', () => {
  it("openai: the header's model and system, each call's id in order, each result as a tool message", async () => {
    const r = await runMain(['log', 'export', '--format', 'openai', example]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as {
      model: string;
      messages: { role: string; content: unknown; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    };
    const raw = rawEvents(example);
    const headers = raw.filter((e) => e.type === 'request/header');
    const last = headers.at(-1)!.data.header;
    expect(body.model).toBe(last.config.model);
    expect(body.messages[0]).toEqual({ role: 'system', content: last.system });
    const calls = raw.filter((e) => e.type === 'tool/call').map((e) => e.data.callId);
    expect(body.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? [])).toEqual(calls);
    expect(body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(
      raw.filter((e) => e.type === 'tool/result').map((e) => e.data.message.content[0].toolCallId),
    );
  });

  it('anthropic: system on top, tool_use and tool_result paired by id, roles alternating', async () => {
    const r = await runMain(['log', 'export', '--format', 'anthropic', example]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as {
      system: string;
      max_tokens: number;
      messages: { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[];
    };
    const raw = rawEvents(example);
    expect(body.system).toBe(raw.filter((e) => e.type === 'request/header').at(-1)!.data.header.system);
    const uses = body.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_use').map((b) => b.id));
    const results = body.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    expect(uses).toEqual(raw.filter((e) => e.type === 'tool/call').map((e) => e.data.callId));
    expect(results).toEqual(uses);
    for (let i = 1; i < body.messages.length; i++) expect(body.messages[i]!.role).not.toBe(body.messages[i - 1]!.role);
    expect(body.max_tokens).toBeGreaterThan(0);
  });

  it('--at gives the history after that seq; past the end is SEQ_OUT_OF_RANGE naming the range', async () => {
    const raw = rawEvents(example);
    const firstAssistant = raw.find((e) => e.type === 'assistant/message')!.seq;
    const r = await runMain(['log', 'export', '--format', 'openai', '--at', String(firstAssistant - 1), example]);
    const body = JSON.parse(r.stdout) as { messages: { role: string }[] };
    expect(body.messages.some((m) => m.role === 'assistant')).toBe(false);
    const far = await runMain(['log', 'export', '--format', 'openai', '--at', '999999', example]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('SEQ_OUT_OF_RANGE');
    expect(far.stderr).toContain(`0…${raw.at(-1)!.seq}`);
  });
});

describe('flags', () => {
  it('need exactly one of --otlp and --format, and refuse the options of the other', async () => {
    for (const flags of [
      [],
      ['--otlp', 'http://127.0.0.1:9/v1/traces', '--format', 'html'],
      ['--format', 'html', '--traces', 'session'],
      ['--otlp', 'http://127.0.0.1:9/v1/traces', '-o', join(dir, 'x')],
      ['--format', 'pdf'],
      ['--format', 'markdown', '--at', '3'],
    ]) {
      const r = await runMain(['log', 'export', ...flags, example]);
      expect(r.code, flags.join(' ')).toBe(2);
    }
  });

  it('-o writes the file whole and says so on stderr; a directory as -o is refused before reading', async () => {
    const out = join(dir, 'session.md');
    const r = await runMain(['log', 'export', '--format', 'markdown', '-o', out, example]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toMatch(/^# Session /);
    const bad = await runMain(['log', 'export', '--format', 'markdown', '-o', dir, example]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('WRITE_FAILED');
  });
});

describeShared("another agent's log", () => {
  it('a Claude Code transcript exports as markdown and as an openai array', async () => {
    const cc = sharedPath('fixtures', 'real', 'claude-code-viewer', 'fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
    const md = await runMain(['log', 'export', '--format', 'markdown', cc]);
    expect(md.code).toBe(0);
    // Every tool_use id of the source has its call in the transcript.
    const ids = new Set<string>();
    for (const line of readFileSync(cc, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line) as { type?: string; isSidechain?: boolean; message?: { content?: unknown } };
      if (rec.type !== 'assistant' || rec.isSidechain || !Array.isArray(rec.message?.content)) continue;
      for (const b of rec.message.content as { type: string; id?: string }[]) if (b.type === 'tool_use' && b.id) ids.add(b.id);
    }
    expect(ids.size).toBeGreaterThan(0);
    for (const id of ids) expect(md.stdout).toContain(`(${id.replace(/_/g, '\\_')}):`);
    const oa = await runMain(['log', 'export', '--format', 'openai', cc]);
    expect(oa.code).toBe(0);
    expect(Array.isArray((JSON.parse(oa.stdout) as { messages: unknown[] }).messages)).toBe(true);
  });
});
