import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions, type PermissionsOptions } from '../../src/tools/permissions/plugin.js';
import { parseRule, PermissionRuleError } from '../../src/tools/permissions/rules.js';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';
import type { ApprovalHandler, ApprovalRequest } from '../../src/tools/pipeline.js';
import type { Plugin } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';
import { agentFor, call, outsideDir, tempDir, text, writeTree } from './helpers.js';

const bwrap = await probeBubblewrap();
const NO_BWRAP = '/nonexistent/bwrap';

/** A tool with no permission info: treated as external (e.g. what an MCP server offers). */
const externalTool: Plugin = (host) =>
  host.tool({ name: 'remote_thing', description: 'x', parameters: z.object({}), execute: () => 'remote ran' });

function setup(p: PermissionsOptions, approve?: ApprovalHandler, files: Record<string, string> = { 'a.txt': 'alpha\n' }) {
  const root = tempDir();
  writeTree(root, files);
  const asked: ApprovalRequest[] = [];
  const recordingApprove: ApprovalHandler | undefined = approve
    ? (r, s) => {
        asked.push(r);
        return approve(r, s);
      }
    : undefined;
  const agent = agentFor(
    root,
    [codingTools({ ripgrep: 'off' }), permissions(p), externalTool],
    recordingApprove ? { approve: recordingApprove } : {},
  );
  const events = (type: string) => agent.session.events.filter((e) => e.type === type).map((e) => e.data);
  return { root, agent, asked, events };
}

describe('rules', () => {
  const ws = '/ws';
  it('bash(git status*) allows the command and its flags, not a compound command', () => {
    const r = parseRule('bash(git status*)', 'allow');
    expect(r.matches('bash', { kind: 'command', value: 'git status --short' }, ws)).toBe(true);
    expect(r.matches('bash', { kind: 'command', value: 'git status; rm -rf ~' }, ws)).toBe(false);
    expect(r.matches('bash', { kind: 'command', value: 'git status && curl evil' }, ws)).toBe(false);
    expect(r.matches('bash', { kind: 'command', value: 'git statusx $(id)' }, ws)).toBe(false);
    expect(r.matches('bash', { kind: 'command', value: 'git log' }, ws)).toBe(false);
    expect(r.matches('edit', { kind: 'command', value: 'git status' }, ws)).toBe(false);
  });

  it('deny rules catch a matching part of a compound command', () => {
    const r = parseRule('bash(rm *)', 'deny');
    expect(r.matches('bash', { kind: 'command', value: 'make && rm build.o' }, ws)).toBe(true);
    expect(r.matches('bash', { kind: 'command', value: 'echo hi | (rm x)' }, ws)).toBe(true);
    expect(r.matches('bash', { kind: 'command', value: 'echo rm' }, ws)).toBe(false);
  });

  it('path patterns are workspace-relative globs', () => {
    const r = parseRule('edit(src/**)', 'allow');
    expect(r.matches('edit', { kind: 'path', value: 'src/a/b.ts' }, ws)).toBe(true);
    expect(r.matches('edit', { kind: 'path', value: '/ws/src/x.ts' }, ws)).toBe(true);
    expect(r.matches('edit', { kind: 'path', value: './src/x.ts' }, ws)).toBe(true);
    expect(r.matches('edit', { kind: 'path', value: 'lib/x.ts' }, ws)).toBe(false);
    expect(r.matches('edit', { kind: 'path', value: 'src/../lib/x.ts' }, ws)).toBe(false);
    expect(parseRule('write(*.md)', 'deny').matches('write', { kind: 'path', value: 'docs/a.md' }, ws)).toBe(false);
  });

  it('tool names may be globs; a bare name matches every call; a pattern needs a subject', () => {
    expect(parseRule('everything__*', 'allow').matches('everything__echo', undefined, ws)).toBe(true);
    expect(parseRule('bash', 'allow').matches('bash', { kind: 'command', value: 'anything; at all' }, ws)).toBe(true);
    expect(parseRule('remote(x*)', 'allow').matches('remote', undefined, ws)).toBe(false);
  });

  it('rejects malformed rules with a typed error', () => {
    expect(() => parseRule('bash(', 'allow')).toThrow(PermissionRuleError);
    expect(() => parseRule('bash()', 'allow')).toThrow(/empty pattern/);
    expect(() => parseRule('two words', 'deny')).toThrow(/tool or tool\(pattern\)/);
  });
});

describe('permissions plugin', () => {
  it('logs the sandbox mode and the approval policy', () => {
    const { events } = setup({ sandbox: 'read-only', approval: 'never' });
    expect(events('sandbox/mode')).toEqual([{ mode: 'read-only', source: 'config' }]);
    expect(events('approval/policy')).toEqual([{ policy: 'never' }]);
  });

  it('a deny rule denies with a result that names the rule', async () => {
    const { agent } = setup({ deny: ['bash(rm *)'], approval: 'never' });
    const o = await call(agent, 'bash', { command: 'rm -rf a.txt' });
    expect(o.error).toEqual({ name: 'PermissionDeniedError', code: 'DENIED' });
    expect(text(o)).toBe('Error: bash was denied: it matches the deny rule "bash(rm *)"');
  });

  it('a non-interactive run denies what would ask, says why, and logs the ask and the decision', async () => {
    const { agent, events } = setup({ ask: ['write(*.txt)'] });
    const o = await call(agent, 'write', { file_path: 'a.txt', content: 'changed' });
    expect(o.error).toEqual({ name: 'ApprovalError', code: 'APPROVAL_UNAVAILABLE' });
    expect(text(o)).toContain('needs approval and no one can approve in this session (non-interactive); it was not run');
    expect(text(o)).toContain('it matches the ask rule "write(*.txt)"');
    const [asked] = events('approval/asked') as { id: string; toolName: string; reason: string }[];
    expect(asked).toMatchObject({ toolName: 'write', reason: 'it matches the ask rule "write(*.txt)"' });
    expect(events('approval/decided')).toEqual([{ id: asked!.id, outcome: 'unavailable' }]);
  });

  it('the approval callback decides: allowed-once runs the call, rejected does not', async () => {
    let answer: 'allowed-once' | 'rejected' = 'allowed-once';
    const { agent, asked, root } = setup({ ask: ['write(*.txt)'] }, () => answer);
    expect((await call(agent, 'write', { file_path: 'a.txt', content: 'v2' })).isError).toBe(false);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('v2');
    answer = 'rejected';
    const o = await call(agent, 'write', { file_path: 'a.txt', content: 'v3' });
    expect(o.error?.code).toBe('APPROVAL_REJECTED');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('v2');
    expect(asked.map((a) => [a.toolName, a.args])).toEqual([
      ['write', { file_path: 'a.txt', content: 'v2' }],
      ['write', { file_path: 'a.txt', content: 'v3' }],
    ]);
  });

  it('allow for this session: the rule is recorded and later calls it matches run unasked; a deny rule still wins', async () => {
    const { agent, asked, root, events } = setup({ ask: ['write(*.txt)'], deny: ['write(secret.txt)'] }, (r) => ({
      outcome: 'allowed-once',
      rule: `write(${(r.args as { file_path: string }).file_path})`,
    }));
    expect((await call(agent, 'write', { file_path: 'a.txt', content: 'v2' })).isError).toBe(false);
    expect((await call(agent, 'write', { file_path: 'a.txt', content: 'v3' })).isError).toBe(false);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('v3');
    // Another path is not covered by the rule: it asks again (and adds its own rule).
    expect((await call(agent, 'write', { file_path: 'b.txt', content: 'b' })).isError).toBe(false);
    expect(asked.map((a) => (a.args as { file_path: string }).file_path)).toEqual(['a.txt', 'b.txt']);
    const ids = (events('approval/asked') as { id: string }[]).map((a) => a.id);
    expect(events('approval/decided')).toEqual(ids.map((id) => ({ id, outcome: 'allowed-once' })));
    expect(events('approval/rule')).toEqual([
      { id: ids[0], rule: 'write(a.txt)', effect: 'allow', scope: 'session' },
      { id: ids[1], rule: 'write(b.txt)', effect: 'allow', scope: 'session' },
    ]);
    expect(agent.session.events.filter((e) => e.type === 'approval/rule').every((e) => e.ignorable === true)).toBe(true);
    expect((await call(agent, 'write', { file_path: 'secret.txt', content: 's' })).error?.code).toBe('DENIED');

    // The rule lives in the log: an agent on a fork of it (or a resume) applies it without asking.
    const again: ApprovalRequest[] = [];
    const child = createAgent({
      model: 'scripted:test',
      cwd: root,
      adapters: new ScriptedAdapter([]),
      session: agent.session.fork(agent.session.length - 1),
      plugins: [codingTools({ ripgrep: 'off' }), permissions({ ask: ['write(*.txt)'] })],
      approve: (r) => (again.push(r), 'rejected'),
      retry: false,
    });
    expect((await call(child, 'write', { file_path: 'a.txt', content: 'v4' })).isError).toBe(false);
    expect((await call(child, 'write', { file_path: 'c.txt', content: 'c' })).error?.code).toBe('APPROVAL_REJECTED');
    expect(again.map((a) => (a.args as { file_path: string }).file_path)).toEqual(['c.txt']);
  });

  it('a rule the handler gives that does not parse is not recorded and the call is refused (fail closed)', async () => {
    const { agent, root, events } = setup({ ask: ['write(*.txt)'] }, () => ({ outcome: 'allowed-once', rule: 'write(' }));
    const o = await call(agent, 'write', { file_path: 'a.txt', content: 'v2' });
    expect(o.error?.code).toBe('APPROVAL_UNAVAILABLE');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(events('approval/rule')).toEqual([]);
    expect(events('approval/decided')).toMatchObject([{ outcome: 'unavailable' }]);
  });

  it('deny with a reason: the model reads the reason in the result and the decision records it', async () => {
    const { agent, root, events } = setup({ ask: ['write(*.txt)'] }, () => ({ outcome: 'rejected', reason: '  use notes.md instead ' }));
    const o = await call(agent, 'write', { file_path: 'a.txt', content: 'v2' });
    expect(o.error).toEqual({ name: 'ApprovalError', code: 'APPROVAL_REJECTED' });
    expect(text(o)).toBe(
      'Error: write: the user rejected it; it was not run. The user said: use notes.md instead ' +
        '(asked because: it matches the ask rule "write(*.txt)")',
    );
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('alpha\n');
    const [asked] = events('approval/asked') as { id: string }[];
    expect(events('approval/decided')).toEqual([{ id: asked!.id, outcome: 'rejected', reason: 'use notes.md instead' }]);
  });

  it('a handler answering something outside the four outcomes is refused as unavailable', async () => {
    const { agent, events } = setup({ ask: ['write(*.txt)'] }, () => 'yes' as unknown as 'allowed-once');
    expect((await call(agent, 'write', { file_path: 'a.txt', content: 'v2' })).error?.code).toBe('APPROVAL_UNAVAILABLE');
    expect(events('approval/decided')).toMatchObject([{ outcome: 'unavailable' }]);
  });

  it('under "ask", tools the sandbox does not contain ask; read-only and file tools do not', async () => {
    const { agent, events } = setup({ approval: 'ask' });
    expect((await call(agent, 'remote_thing', {})).error?.code).toBe('APPROVAL_UNAVAILABLE');
    expect((await call(agent, 'read', { file_path: 'a.txt' })).isError).toBe(false);
    expect((await call(agent, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBe(false);
    expect(events('approval/asked')).toHaveLength(1);
  });

  it('an allow rule lets a call through that would otherwise ask', async () => {
    const { agent } = setup({ sandbox: 'danger-full-access', approval: 'ask', allow: ['bash(echo *)', 'remote_*'] });
    expect(text(await call(agent, 'bash', { command: 'echo allowed' }))).toBe('allowed\n');
    expect(text(await call(agent, 'remote_thing', {}))).toBe('remote ran');
    const o = await call(agent, 'bash', { command: 'ls' });
    expect(o.error?.code).toBe('APPROVAL_UNAVAILABLE');
    expect(text(o)).toContain('bash runs without a sandbox (mode danger-full-access)');
  });

  it('under "never", an ask rule denies (nobody can approve) and everything else runs', async () => {
    const { agent, events } = setup({ approval: 'never', ask: ['bash(git push*)'] });
    const o = await call(agent, 'bash', { command: 'git push origin main' });
    expect(o.error?.code).toBe('DENIED');
    expect(text(o)).toContain('the approval policy is "never"');
    expect(text(await call(agent, 'remote_thing', {}))).toBe('remote ran');
    expect(events('approval/asked')).toHaveLength(0);
  });

  it('read-only mode refuses file writes at the fs seam, whatever tool asks', async () => {
    const { agent, root } = setup({ sandbox: 'read-only', approval: 'never' });
    const w = await call(agent, 'write', { file_path: 'a.txt', content: 'x' });
    expect(w.error).toEqual({ name: 'FsError', code: 'FS_SANDBOX_DENIED' });
    expect(text(w)).toContain('the sandbox mode is read-only');
    expect((await call(agent, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'x' })).error?.code).toBe('FS_SANDBOX_DENIED');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect((await call(agent, 'read', { file_path: 'a.txt' })).isError).toBe(false);
  });

  it('a one-call escalation asks with the justification, and an approved write goes through under read-only', async () => {
    const { agent, asked, events, root } = setup({ sandbox: 'read-only' }, () => 'allowed-once');
    const o = await call(agent, 'write', {
      file_path: 'escalated.md',
      content: 'escalated',
      sandbox_permissions: 'danger-full-access',
      justification: 'the user asked',
    });
    expect(o.isError).toBe(false);
    expect(readFileSync(join(root, 'escalated.md'), 'utf8')).toBe('escalated');
    expect(asked[0]?.reason).toBe('escalate sandbox to danger-full-access: the user asked');
    expect(events('approval/asked')[0]).toMatchObject({
      toolName: 'write',
      reason: 'escalate sandbox to danger-full-access: the user asked',
    });
    // The escalation covered that call only.
    expect((await call(agent, 'write', { file_path: 'after.md', content: 'x' })).error?.code).toBe('FS_SANDBOX_DENIED');
  });

  it('a session rule never approves an escalation: the same call asking to leave the sandbox asks again', async () => {
    const answers: ('rule' | 'rejected')[] = ['rule', 'rejected'];
    const { agent, asked, root, events } = setup({ sandbox: 'read-only', ask: ['write(*.md)'] }, (r) =>
      answers.shift() === 'rule' ? { outcome: 'allowed-once', rule: `write(${(r.args as { file_path: string }).file_path})` } : 'rejected',
    );
    // Allowed for this session inside the sandbox (read-only: the write itself is still refused by the sandbox).
    expect((await call(agent, 'write', { file_path: 'e.md', content: 'x' })).error?.code).toBe('FS_SANDBOX_DENIED');
    expect(events('approval/rule')).toMatchObject([{ rule: 'write(e.md)' }]);
    // The same path with an escalation: the rule does not cover it; the user is asked and says no.
    const o = await call(agent, 'write', {
      file_path: 'e.md',
      content: 'escalated',
      sandbox_permissions: 'danger-full-access',
      justification: 'please',
    });
    expect(o.error?.code).toBe('APPROVAL_REJECTED');
    expect(asked.map((a) => a.reason)).toEqual(['it matches the ask rule "write(*.md)"', 'escalate sandbox to danger-full-access: please']);
    expect(existsSync(join(root, 'e.md'))).toBe(false);
  });

  it('an escalation under "never" is denied', async () => {
    const { agent, root } = setup({ sandbox: 'read-only', approval: 'never' });
    const o = await call(agent, 'write', {
      file_path: 'e.md',
      content: 'x',
      sandbox_permissions: 'danger-full-access',
      justification: 'please',
    });
    expect(o.error?.code).toBe('DENIED');
    expect(text(o)).toContain('no one can approve that');
    expect(existsSync(join(root, 'e.md'))).toBe(false);
  });
});

describe('shell sandbox where bubblewrap is missing', () => {
  it('reports the mode as partially enforced, never silently', async () => {
    const { agent } = setup({ sandbox: 'workspace-write', approval: 'never', bubblewrap: NO_BWRAP });
    const o = await call(agent, 'bash', { command: 'echo ran' });
    expect(text(o)).toBe(
      `ran\n[sandbox: workspace-write is only partially enforced on this machine (bubblewrap (${NO_BWRAP}) is not installed); ` +
        'this command ran without a file sandbox]',
    );
    expect(o.meta).toMatchObject({ sandbox: { mode: 'workspace-write', enforcement: 'partial' } });
  });

  it('under "ask", an unsandboxable command needs approval (and a non-interactive run denies it)', async () => {
    const { agent } = setup({ sandbox: 'workspace-write', approval: 'ask', bubblewrap: NO_BWRAP });
    const o = await call(agent, 'bash', { command: 'echo ran' });
    expect(o.error?.code).toBe('APPROVAL_UNAVAILABLE');
    expect(text(o)).toContain('bash would run without a sandbox: workspace-write is only partially enforced here');
  });
});

const withBwrap = bwrap.ok ? describe : describe.skip;
if (!bwrap.ok) console.warn(`[dsh tests] skipping the bubblewrap sandbox tests: ${bwrap.reason}`);

withBwrap(`shell sandbox with bubblewrap${bwrap.ok ? '' : ` (skipped: ${bwrap.reason})`}`, () => {
  it('workspace-write: writes inside the workspace work, writes outside are denied and marked', async () => {
    const outside = outsideDir();
    const { agent, root } = setup({ sandbox: 'workspace-write', approval: 'ask' });
    const ok = await call(agent, 'bash', { command: 'echo made > inside.txt && cat inside.txt' });
    expect(text(ok)).toBe('made\n');
    expect(ok.meta).toMatchObject({ sandbox: { mode: 'workspace-write', enforcement: 'full', backend: 'bubblewrap' } });
    const denied = await call(agent, 'bash', { command: `touch ${outside}/escaped.txt` });
    expect(text(denied)).toContain('Read-only file system');
    expect(text(denied)).toContain('[sandbox: file access denied under workspace-write mode');
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
  });

  it('read-only: the command can read the workspace but not change it', async () => {
    const { agent, root } = setup({ sandbox: 'read-only', approval: 'ask' });
    expect(text(await call(agent, 'bash', { command: 'cat a.txt' }))).toBe('alpha\n');
    const o = await call(agent, 'bash', { command: 'echo x > a.txt' });
    expect(text(o)).toContain('Read-only file system');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('alpha\n');
  });

  it('/tmp inside the sandbox is private scratch space', async () => {
    const { agent } = setup({ sandbox: 'read-only', approval: 'ask' });
    expect(text(await call(agent, 'bash', { command: 'echo scratch > /tmp/dsh-sandbox-probe && cat /tmp/dsh-sandbox-probe' }))).toBe(
      'scratch\n',
    );
    expect(existsSync('/tmp/dsh-sandbox-probe')).toBe(false);
  });

  it('an approved escalation runs that one command outside the sandbox', async () => {
    const outside = outsideDir();
    const { agent } = setup({ sandbox: 'workspace-write' }, () => 'allowed-once');
    const o = await call(agent, 'bash', {
      command: `printf 'escalated\\n' > ${outside}/e.txt && cat ${outside}/e.txt`,
      sandbox_permissions: 'danger-full-access',
      justification: 'the user asked to write a file outside the workspace',
    });
    expect(text(o)).toBe('escalated\n');
    expect(o.meta).toMatchObject({ sandbox: { mode: 'danger-full-access', escalatedFrom: 'workspace-write' } });
    const after = await call(agent, 'bash', { command: `touch ${outside}/again.txt` });
    expect(text(after)).toContain('Read-only file system');
  });

  it('background jobs run in the sandbox too', async () => {
    const outside = outsideDir();
    const { agent } = setup({ sandbox: 'workspace-write', approval: 'ask' });
    await call(agent, 'bash', { command: `touch ${outside}/bg.txt`, run_in_background: true });
    const o = await call(agent, 'job_output', { job_id: 'bash-1', wait: true });
    expect(text(o)).toContain('Read-only file system');
    expect(existsSync(join(outside, 'bg.txt'))).toBe(false);
  });
});

describe('hidden paths (dsh config files holding literal keys)', () => {
  it('the file tools refuse them, through a link too, in every mode; under bubblewrap commands read an empty file', async () => {
    const root = outsideDir();
    writeTree(root, { '.dsh/config.json': '{"providers":{"x":{"apiKey":"sk-literal-0123456789"}}}', 'ok.txt': 'ok\n' });
    const { symlinkSync } = await import('node:fs');
    symlinkSync('.dsh/config.json', join(root, 'alias.json'));
    const bw = await probeBubblewrap('bwrap');
    for (const sandbox of ['read-only', 'workspace-write', 'danger-full-access'] as const) {
      const agent = agentFor(root, [
        codingTools({ ripgrep: 'off' }),
        permissions({ sandbox, approval: 'never', hidePaths: [join(root, '.dsh/config.json')] }),
      ]);
      for (const p of ['.dsh/config.json', 'alias.json']) {
        const o = await call(agent, 'read', { file_path: p });
        expect(o.error?.code, `${sandbox} ${p}`).toBe('FS_SANDBOX_DENIED');
        expect(text(o)).not.toContain('sk-literal');
      }
      expect(text(await call(agent, 'read', { file_path: 'ok.txt' }))).toContain('1: ok');
      for (const ripgrep of ['off', 'auto'] as const) {
        const searcher = agentFor(root, [
          codingTools({ ripgrep }),
          permissions({ sandbox, approval: 'never', hidePaths: [join(root, '.dsh/config.json')] }),
        ]);
        expect(text(await call(searcher, 'grep', { pattern: 'sk-literal' })), `${sandbox} ${ripgrep}`).toBe('No matches found');
      }
      if (bw.ok) {
        const o = text(await call(agent, 'bash', { command: 'cat .dsh/config.json alias.json; echo end' }));
        expect(o, sandbox).not.toContain('sk-literal');
        expect(o, sandbox).toContain('end');
      }
    }
  });
});

describe('a hidden config file under another name (a hard link the user made)', () => {
  it('the file tools refuse it and grep drops it in every mode, danger-full-access included (by identity, not path)', async () => {
    const root = tempDir();
    writeTree(root, { '.dsh/config.json': '{"providers":{"x":{"apiKey":"sk-literal-0123456789"}}}', 'ok.txt': 'ok\n' });
    const { linkSync } = await import('node:fs');
    linkSync(join(root, '.dsh/config.json'), join(root, 'linked.json'));
    for (const sandbox of ['read-only', 'workspace-write', 'danger-full-access'] as const) {
      const opts = { sandbox, approval: 'never', hidePaths: [join(root, '.dsh/config.json')] } as const;
      const agent = agentFor(root, [codingTools({ ripgrep: 'off' }), permissions(opts)]);
      for (const [tool, args] of [
        ['read', { file_path: 'linked.json' }],
        ['edit', { file_path: 'linked.json', old_string: 'sk-literal', new_string: 'x' }],
      ] as const) {
        const o = await call(agent, tool, args);
        expect(o.error?.code, `${sandbox} ${tool}`).toBe('FS_SANDBOX_DENIED');
        expect(text(o)).not.toContain('sk-literal');
      }
      for (const ripgrep of ['off', 'auto'] as const) {
        const searcher = agentFor(root, [codingTools({ ripgrep }), permissions(opts)]);
        const found = text(await call(searcher, 'grep', { pattern: 'sk-literal' }));
        expect(found, `${sandbox} ${ripgrep}`).toMatch(/^No matches found/);
        expect(found).not.toContain('sk-literal');
        expect(text(await call(searcher, 'grep', { pattern: 'ok' })), `${sandbox} ${ripgrep}`).toContain('ok.txt');
      }
    }
  });
});

describe('unconfined plans (what a shell/run listener may run outside dsh, e.g. an editor terminal)', () => {
  /** Every foreground plan's `unconfined` mark, seen by a listener at the end of `shell/run`. */
  async function marks(p: PermissionsOptions, args: Record<string, unknown> = {}): Promise<(boolean | undefined)[]> {
    const seen: (boolean | undefined)[] = [];
    const spy: Plugin = (host) => host.on('shell/run', async (x, next) => (seen.push(x.plan.unconfined), next(x)));
    const root = tempDir();
    const agent = agentFor(root, [codingTools({ ripgrep: 'off' }), permissions(p), spy], { approve: () => 'allowed-once' });
    await call(agent, 'bash', { command: 'true', ...args });
    return seen;
  }

  it('without a sandbox backend every command is unconfined (the mode holds for the file tools only)', async () => {
    expect(await marks({ sandbox: 'workspace-write', approval: 'never', bubblewrap: NO_BWRAP })).toEqual([true]);
  });

  withBwrap('with bubblewrap', () => {
    it('only full access with the network on and nothing hidden is unconfined', async () => {
      expect(await marks({ sandbox: 'read-only' })).toEqual([undefined]);
      expect(await marks({ sandbox: 'workspace-write' })).toEqual([undefined]);
      expect(await marks({ sandbox: 'danger-full-access' })).toEqual([true]);
      expect(await marks({ sandbox: 'danger-full-access', network: false })).toEqual([undefined]);
      expect(await marks({ sandbox: 'danger-full-access', hidePaths: [join(tempDir(), 'config.json')] })).toEqual([undefined]);
      expect(await marks({ sandbox: 'danger-full-access', exposedKeys: 'test' })).toEqual([undefined]);
    });

    it('an approved escalation is unconfined for its one call', async () => {
      const args = { sandbox_permissions: 'danger-full-access', justification: 'test' };
      expect(await marks({ sandbox: 'workspace-write' }, args)).toEqual([true]);
    });
  });
});
