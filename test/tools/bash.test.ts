import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codingTools } from '../../src/tools/coding-tools.js';
import { agentFor, call, tempDir, text } from './helpers.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll a condition (bounded); the test then asserts the condition itself. */
async function until(cond: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
}

function setup(opts: Parameters<typeof codingTools>[0] = {}) {
  const root = tempDir();
  const spillDir = tempDir('dsh-spill-');
  return { root, spillDir, agent: agentFor(root, [codingTools({ spillDir, ...opts })]) };
}

describe('bash', () => {
  it('runs in the workspace and reports stdout', async () => {
    const { root, agent } = setup();
    const o = await call(agent, 'bash', { command: 'echo HELLO; pwd', description: 'Echo HELLO' });
    expect(o.isError).toBe(false);
    expect(text(o)).toBe(`HELLO\n${root}\n`);
  });

  it('reports (no output), a [stderr] section and a non-zero exit as dsh does', async () => {
    const { agent } = setup();
    expect(text(await call(agent, 'bash', { command: 'true' }))).toBe('(no output)');
    expect(text(await call(agent, 'bash', { command: 'test -e nope' }))).toBe('(no output)\n[exit code: 1]');
    const both = await call(agent, 'bash', { command: 'echo out; echo err >&2; exit 3' });
    expect(text(both)).toBe('out\n[stderr]\nerr\n[exit code: 3]');
    expect(both.isError).toBe(false);
    expect(both.meta).toMatchObject({ exitCode: 3 });
  });

  it('starts a fresh shell per call: no cwd or variables carry over', async () => {
    const { root, agent } = setup();
    await call(agent, 'bash', { command: 'cd /; export DSH_X=1' });
    expect(text(await call(agent, 'bash', { command: 'echo "${DSH_X:-unset} $PWD"' }))).toBe(`unset ${root}\n`);
  });

  it('keeps the harness credentials out of the command environment, unless passed explicitly', async () => {
    process.env.DSH_TEST_API_KEY = 'sk-should-not-leak';
    try {
      const root = tempDir();
      const agent = agentFor(root, [codingTools({ shellEnv: { GH_TOKEN: 'given' } })]);
      expect(text(await call(agent, 'bash', { command: 'echo "${DSH_TEST_API_KEY:-absent} $GH_TOKEN"' }))).toBe('absent given\n');
    } finally {
      delete process.env.DSH_TEST_API_KEY;
    }
  });

  it('hides variables named in hideEnv (a provider key under any name), their values under other names, and *_KEY names', async () => {
    const vars = { MYLLM_AUTH: 'sk-myllm-987', COPY_OF_IT: 'sk-myllm-987', MYLLM_KEY: 'k2', HARMLESS: 'shown', KEYBOARD: 'us' };
    Object.assign(process.env, vars);
    try {
      const agent = agentFor(tempDir(), [codingTools({ hideEnv: ['MYLLM_AUTH'] })]);
      const out = text(
        await call(agent, 'bash', { command: 'echo "${MYLLM_AUTH:-a} ${COPY_OF_IT:-b} ${MYLLM_KEY:-c} $HARMLESS $KEYBOARD"' }),
      );
      expect(out).toBe('a b c shown us\n');
    } finally {
      for (const k of Object.keys(vars)) delete process.env[k];
    }
  });

  it('runs in workdir when given', async () => {
    const { root, agent } = setup();
    await call(agent, 'write', { file_path: 'sub/x', content: '' });
    expect(text(await call(agent, 'bash', { command: 'pwd', workdir: 'sub' }))).toBe(`${join(root, 'sub')}\n`);
  });

  it('kills a command that outlives its timeout, with its children', async () => {
    const { root, agent } = setup();
    const o = await call(agent, 'bash', { command: '(sleep 30; touch late.txt) & sleep 30', timeoutMs: 300 });
    expect(o.isError).toBe(true);
    expect(o.error).toEqual({ name: 'BashError', code: 'BASH_TIMEOUT' });
    expect(text(o)).toContain('[timed out after 300 ms; the command was killed');
    expect(existsSync(join(root, 'late.txt'))).toBe(false);
  });

  it('caps output, keeps head and tail, and spills the whole stream to a file whose path it returns', async () => {
    const { agent, spillDir } = setup({ bash: { maxOutputBytes: 1000 } });
    const o = await call(agent, 'bash', { command: `node -e "process.stdout.write('SPILL_START-' + 'x'.repeat(5000) + '-SPILL_END')"` });
    const t = text(o);
    expect(t.startsWith('SPILL_START-')).toBe(true);
    expect(t).toContain('-SPILL_END');
    expect(t).toMatch(/\[… 4022 bytes omitted …\]/);
    const path = /Full output saved to: (\S+)\. Use read/.exec(t)?.[1];
    expect(path?.startsWith(spillDir)).toBe(true);
    expect(readFileSync(path!, 'utf8')).toBe(`SPILL_START-${'x'.repeat(5000)}-SPILL_END`);
    expect(o.meta).toMatchObject({ stdoutSpill: path });
    // The model can follow the locator with read.
    const r = await call(agent, 'read', { file_path: path! });
    expect(text(r)).toContain('1: SPILL_START-');
  });

  it('ends when the call is cancelled', async () => {
    const { agent, root } = setup();
    const ac = new AbortController();
    const p = call(agent, 'bash', { command: 'touch started; sleep 30' }, ac.signal);
    await until(() => existsSync(join(root, 'started')));
    ac.abort();
    const o = await p;
    expect(o.error?.code).toBe('ABORTED');
  });
});

describe('background jobs', () => {
  it('returns a job id, then job_output reads new output and the final status', async () => {
    const { agent } = setup();
    const started = await call(agent, 'bash', { command: 'echo first; sleep 0.2; echo second', run_in_background: true });
    expect(text(started)).toBe('started background job bash-1');
    const waited = await call(agent, 'job_output', { job_id: 'bash-1', wait: true });
    expect(text(waited)).toBe('first\nsecond\n[status: completed, exit code 0]');
    expect(text(await call(agent, 'job_output', { job_id: 'bash-1' }))).toBe('(no new output)\n[status: completed, exit code 0]');
  });

  it('job_kill stops a running job; job_list shows it', async () => {
    const { agent } = setup();
    await call(agent, 'bash', { command: 'while :; do sleep 60; done', run_in_background: true });
    expect(text(await call(agent, 'job_output', { job_id: 'bash-1' }))).toBe('(no new output)\n[status: running]');
    expect(text(await call(agent, 'job_kill', { job_id: 'bash-1', reason: 'free the slot' }))).toBe('requested cancellation of job bash-1');
    expect(text(await call(agent, 'job_output', { job_id: 'bash-1', wait: true }))).toBe('(no new output)\n[status: killed]');
    expect(text(await call(agent, 'job_list', {}))).toBe('bash-1 [status: killed] while :; do sleep 60; done');
    expect(text(await call(agent, 'job_kill', { job_id: 'bash-1' }))).toBe('job bash-1 had already finished [status: killed]');
  });

  it('a timed-out wait leaves the job running', async () => {
    const { agent } = setup();
    await call(agent, 'bash', { command: 'sleep 30', run_in_background: true });
    expect(text(await call(agent, 'job_output', { job_id: 'bash-1', wait: true, timeout_ms: 50 }))).toBe(
      '(no new output)\n[status: running]',
    );
    await call(agent, 'job_kill', { job_id: 'bash-1' });
  });

  it('names an unknown job clearly', async () => {
    const { agent } = setup();
    const o = await call(agent, 'job_output', { job_id: 'bash-9' });
    expect(o.error?.code).toBe('JOB_NOT_FOUND');
    expect(text(o)).toContain('no background job was started');
  });

  it('disposing the plugin kills running jobs', async () => {
    const { agent, root } = setup();
    await call(agent, 'bash', { command: 'echo $$ > pid; exec sleep 30', run_in_background: true });
    const pidFile = join(root, 'pid');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    await agent.dispose();
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });
});
