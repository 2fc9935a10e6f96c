/**
 * A team's Claude Code and Codex hook scripts see dsh's tool calls under the names and argument
 * shapes they were written for (review S3 of issue 16): file changes through the `minimal` tool
 * set's `str_replace_editor` reach an `Edit|Write|MultiEdit` guard with `file_path`, a script that
 * tests `.tool_name == "Bash"` in its body sees `Bash`, and Codex hooks see `apply_patch` with the
 * change as a patch in `tool_input.command`. The guards are real scripts (node, reading stdin);
 * expected payloads are written from the calls the scripted model makes.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { peerCall } from '../../src/coding/hook-bridge/peer-tools.js';
import { textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { agentIn, ofType, texts, workspace } from './support/hook-agent.js';

/**
 * A guard as teams write it: logs what it was given to seen.jsonl, then refuses a change to a
 * `.env` file, reading the path the way its dialect gives it (Claude Code `tool_input.file_path`;
 * Codex: the `*** Add File:` / `*** Update File:` lines of the patch in `tool_input.command`), and
 * refuses `rm` when `tool_name` is `Bash`.
 */
const GUARD = `
import { appendFileSync, readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(0, 'utf8'));
appendFileSync('seen.jsonl', JSON.stringify(p) + '\\n');
const deny = (why) => { process.stderr.write(why + '\\n'); process.exit(2); };
const input = p.tool_input ?? {};
const fileLine = /^\\*\\*\\* (Add|Update|Delete) File: /;
const paths = p.tool_name === 'apply_patch'
  ? String(input.command).split('\\n').filter((l) => fileLine.test(l)).map((l) => l.slice(l.indexOf(': ') + 2))
  : ['Write', 'Edit', 'MultiEdit'].includes(p.tool_name) ? [input.file_path] : [];
for (const f of paths) if (/(^|\\/)\\.env$/.test(f)) deny('protected file: ' + f);
if (p.tool_name === 'Bash' && /^rm /.test(input.command)) deny('no rm here');
`;

function guarded(matchers: Record<string, string>): string {
  const node = JSON.stringify(process.execPath);
  const hooks = Object.fromEntries(
    Object.entries(matchers).map(([point, matcher]) => [
      point,
      [{ ...(matcher === '' ? {} : { matcher }), hooks: [{ type: 'command', command: `${node} guard.mjs` }] }],
    ]),
  );
  const cwd = workspace(hooks);
  writeFileSync(join(cwd, 'guard.mjs'), GUARD);
  chmodSync(join(cwd, 'guard.mjs'), 0o644);
  return cwd;
}

const seen = (cwd: string): Record<string, unknown>[] =>
  existsSync(join(cwd, 'seen.jsonl'))
    ? readFileSync(join(cwd, 'seen.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe('Claude Code hooks see Claude Code tool names and inputs', () => {
  it('an Edit|Write|MultiEdit guard covers str_replace_editor (minimal set): create is a Write, str_replace and insert Edits', async () => {
    const cwd = guarded({ PreToolUse: 'Edit|Write|MultiEdit' });
    const env = join(cwd, '.env');
    const notes = join(cwd, 'notes.txt');
    const calls = [
      { id: 'c1', name: 'str_replace_editor', args: { command: 'create', path: env, file_text: 'KEY=1\n' } },
      { id: 'c2', name: 'str_replace_editor', args: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'bye' } },
      { id: 'c3', name: 'str_replace_editor', args: { command: 'insert', path: notes, insert_line: 0, new_str: 'top' } },
      { id: 'c4', name: 'str_replace_editor', args: { command: 'view', path: notes } },
    ];
    const a = await agentIn(cwd, 'claude-code', [...calls.map((c) => toolCallResponse([c])), textResponse('ok')], {
      agentPreset: 'minimal',
    });
    try {
      await a.run('edit things');
      const results = ofType(a.events(), 'tool/result');
      expect(results.map((r) => r.data.error?.code)).toEqual(['DENIED', undefined, undefined, undefined]);
      expect(texts(results[0]!.data.message)).toContain(`protected file: ${env}`);
      expect(existsSync(env)).toBe(false);
      expect(readFileSync(notes, 'utf8')).toBe('top\nbye\n');
      // The view is a Read: the Edit|Write matcher does not run the guard for it.
      const got = seen(cwd);
      expect(got.map((p) => [p.tool_name, p.tool_input, p.dsh_tool_name, p.tool_use_id])).toEqual([
        ['Write', { file_path: env, content: 'KEY=1\n' }, 'str_replace_editor', 'c1'],
        ['Edit', { file_path: notes, old_string: 'hello', new_string: 'bye', replace_all: false }, 'str_replace_editor', 'c2'],
        ['Edit', { file_path: notes, old_string: '', new_string: 'top', insert_line: 0 }, 'str_replace_editor', 'c3'],
      ]);
      expect(got.map((p) => p.dsh_tool_input)).toEqual(calls.slice(0, 3).map((c) => c.args));
    } finally {
      await a.close();
    }
  });

  it('a hook without a matcher that tests tool_name == "Bash" in its body sees Bash', async () => {
    const cwd = guarded({ PreToolUse: '' });
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'rm notes.txt', timeoutMs: 5000 } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('clean up');
      const r = ofType(a.events(), 'tool/result')[0]!;
      expect(r.data.error?.code).toBe('DENIED');
      expect(texts(r.data.message)).toContain('no rm here');
      expect(existsSync(join(cwd, 'notes.txt'))).toBe(true);
      // Claude Code's Bash input: the timeout under its name.
      expect(seen(cwd)[0]).toMatchObject({
        tool_name: 'Bash',
        tool_input: { command: 'rm notes.txt', timeout: 5000 },
        dsh_tool_name: 'bash',
      });
    } finally {
      await a.close();
    }
  });
});

describe('Codex hooks see apply_patch and Bash', () => {
  it('an ^apply_patch$ guard sees write and edit as Codex patches; Bash gets {command} only', async () => {
    const cwd = guarded({ PreToolUse: '^(apply_patch|Bash)$' });
    const a = await agentIn(cwd, 'codex', [
      toolCallResponse([{ id: 'c1', name: 'write', args: { file_path: 'conf/.env', content: 'A=1\nB=2\n' } }]),
      toolCallResponse([{ id: 'c2', name: 'edit', args: { file_path: 'notes.txt', old_string: 'hello', new_string: 'hi\nthere' } }]),
      toolCallResponse([{ id: 'c3', name: 'bash', args: { command: 'true', description: 'nothing' } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('x');
      expect(ofType(a.events(), 'tool/result').map((r) => r.data.error?.code)).toEqual(['DENIED', undefined, undefined]);
      expect(existsSync(join(cwd, 'conf', '.env'))).toBe(false);
      expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('hi\nthere\n');
      expect(seen(cwd).map((p) => [p.tool_name, p.tool_input, p.dsh_tool_name])).toEqual([
        ['apply_patch', { command: '*** Begin Patch\n*** Add File: conf/.env\n+A=1\n+B=2\n*** End Patch\n' }, 'write'],
        ['apply_patch', { command: '*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello\n+hi\n+there\n*** End Patch\n' }, 'edit'],
        ['Bash', { command: 'true' }, 'bash'],
      ]);
    } finally {
      await a.close();
    }
  });

  it("Codex's Edit and Write matcher aliases of apply_patch cover str_replace_editor", async () => {
    for (const matcher of ['Edit', 'Write']) {
      const cwd = guarded({ PreToolUse: matcher });
      const env = join(cwd, '.env');
      const a = await agentIn(
        cwd,
        'codex',
        [
          toolCallResponse([{ id: 'c1', name: 'str_replace_editor', args: { command: 'create', path: env, file_text: 'K=v' } }]),
          textResponse('ok'),
        ],
        { agentPreset: 'minimal' },
      );
      try {
        await a.run('x');
        expect(ofType(a.events(), 'tool/result')[0]!.data.error?.code).toBe('DENIED');
        expect(existsSync(env)).toBe(false);
        expect(seen(cwd)[0]).toMatchObject({
          tool_name: 'apply_patch',
          tool_input: { command: `*** Begin Patch\n*** Add File: ${env}\n+K=v\n*** End Patch\n` },
        });
      } finally {
        await a.close();
      }
    }
  });
});

describe('peerCall', () => {
  it("gives each dialect's names and inputs; a tool the peer lacks keeps dsh's", () => {
    expect(peerCall('claude-code', 'grep', { pattern: 'x', path: 'src', include: '*.ts' })).toEqual({
      subjects: ['grep', 'Grep'],
      toolName: 'Grep',
      toolInput: { pattern: 'x', path: 'src', glob: '*.ts' },
    });
    expect(peerCall('claude-code', 'str_replace_editor', { command: 'view', path: '/w/a', view_range: [3, 7] })).toEqual({
      subjects: ['str_replace_editor', 'Read'],
      toolName: 'Read',
      toolInput: { file_path: '/w/a', offset: 3, limit: 5 },
    });
    expect(peerCall('claude-code', 'str_replace_editor', { command: 'view', path: '/w/a', view_range: [3, -1] }).toolInput).toEqual({
      file_path: '/w/a',
      offset: 3,
    });
    // Codex has no read tool: dsh's call, still matched by the Claude Code name as before.
    expect(peerCall('codex', 'read', { file_path: 'a' })).toEqual({
      subjects: ['read', 'Read'],
      toolName: 'read',
      toolInput: { file_path: 'a' },
    });
    expect(peerCall('codex', 'edit', { file_path: 'a', old_string: 'x', new_string: 'y' }).subjects).toEqual([
      'edit',
      'Edit',
      'MultiEdit',
      'apply_patch',
      'Write',
    ]);
    expect(peerCall('codex', 'bash', { command: 'ls' }).subjects).toEqual(['bash', 'Bash', 'shell']);
    expect(peerCall('claude-code', 'job_output', { id: 'j1' })).toEqual({
      subjects: ['job_output'],
      toolName: 'job_output',
      toolInput: { id: 'j1' },
    });
  });
});
