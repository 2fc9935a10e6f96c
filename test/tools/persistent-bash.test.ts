/**
 * The `minimal` tool set's persistent `bash`: one real interactive bash per session, under the
 * same spawn seam, sandbox and environment scrubbing as the fresh-shell `bash`. Every test runs
 * real processes; "nothing left behind" is checked in /proc, by a token only the test's own
 * processes carry on their command line.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';
import { SHELL_RESET_MESSAGE } from '../../src/tools/builtin/persistent-bash.js';
import { ansiQuote } from '../../src/tools/shell/persistent.js';
import { agentFor, call, outsideDir, tempDir, text } from './helpers.js';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';

const bwrap = await probeBubblewrap('bwrap');

/**
 * Pids of live (not zombie) processes whose command line holds `token`; with `asArgv0`, only
 * those whose argv[0] is `token` (the processes `exec -a token` made, not the setsid or bash -c
 * on the way there, whose command lines hold it too for a moment).
 */
function processesWith(token: string, asArgv0 = false): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const state = /\)\s+(\S)/.exec(readFileSync(`/proc/${p}/stat`, 'utf8'))?.[1];
      const hit = asArgv0 ? cmd.startsWith(`${token}\0`) : cmd.includes(token);
      if (hit && state !== 'Z') out.push(Number(p));
    } catch {
      // gone while we looked
    }
  }
  return out;
}

/** Poll a condition for up to 20 s (a loaded machine forks slowly); the test then asserts the condition itself. */
async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
}

function setup(extra: Parameters<typeof codingTools>[0] = {}, sandboxed = false) {
  const root = tempDir();
  const spillDir = tempDir('dsh-spill-');
  const plugins = [codingTools({ spillDir, toolSet: 'minimal', ...extra })];
  if (sandboxed) plugins.push(permissions({ sandbox: 'workspace-write', approval: 'never' }));
  return { root, spillDir, agent: agentFor(root, plugins) };
}

describe('persistent bash (toolSet minimal)', () => {
  it('registers exactly bash and str_replace_editor', () => {
    const { agent } = setup();
    expect(agent.tools.names()).toEqual(['bash', 'str_replace_editor']);
    void agent.dispose();
  });

  it('keeps cwd, exported and plain variables, and functions across calls; drops one trailing newline', async () => {
    const { root, agent } = setup();
    try {
      expect(text(await call(agent, 'bash', { command: 'pwd' }))).toBe(root);
      const first = await call(agent, 'bash', {
        command: 'cd /tmp && export DSH_EXAMPLE_COUNT=1 && printf "COUNT=%s CWD=%s\\n" "$DSH_EXAMPLE_COUNT" "$PWD"',
      });
      expect(first.isError).toBe(false);
      expect(text(first)).toBe('COUNT=1 CWD=/tmp');
      await call(agent, 'bash', { command: 'PLAIN=kept; greet() { echo "hi $1"; }' });
      const second = await call(agent, 'bash', {
        command:
          'DSH_EXAMPLE_COUNT=$((DSH_EXAMPLE_COUNT + 1)); printf "COUNT=%s CWD=%s\\n" "$DSH_EXAMPLE_COUNT" "$PWD"; echo $PLAIN; greet you',
      });
      expect(text(second)).toBe('COUNT=2 CWD=/tmp\nkept\nhi you');
      // Exported reaches children; the plain one does not.
      expect(text(await call(agent, 'bash', { command: 'bash -c \'echo "${DSH_EXAMPLE_COUNT:-none} ${PLAIN:-none}"\'' }))).toBe('2 none');
    } finally {
      await agent.dispose();
    }
  });

  it('merges stderr, reports a failing command with [exit code: N], and keeps $? for the next command', async () => {
    const { agent } = setup();
    try {
      const o = await call(agent, 'bash', { command: 'echo out; echo err >&2; false' });
      expect(text(o)).toBe('out\nerr\n[exit code: 1]');
      expect(o.isError).toBe(false);
      expect(o.meta).toMatchObject({ exitCode: 1, shell: 'persistent' });
      expect(text(await call(agent, 'bash', { command: 'echo "previous=$?"' }))).toBe('previous=1');
      expect(text(await call(agent, 'bash', { command: 'true' }))).toBe('(no output)');
    } finally {
      await agent.dispose();
    }
  });

  it('runs any command text as given: quotes, backslashes, newlines, heredocs, and a fake marker', async () => {
    const { agent } = setup();
    try {
      const cmd = "x='it''s'\ncat <<'EOF'\na\\tb $x\nEOF\necho \"$x\" '\\\\' __dsh_end_0__0";
      expect(text(await call(agent, 'bash', { command: cmd }))).toBe('a\\tb $x\nits \\\\ __dsh_end_0__0');
      // The command's stdin is empty: a reader gets EOF at once instead of eating the next command.
      expect(text(await call(agent, 'bash', { command: 'cat; echo after' }))).toBe('after');
    } finally {
      await agent.dispose();
    }
  });

  it('ansiQuote round-trips any string through bash (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '\\', '\n', '\r', '$', '`', '!', 'é', '\t', '*') }), (s) => {
        const r = spawnSync('bash', ['-c', `printf '%s' ${ansiQuote(s)}`], { encoding: 'utf8' });
        expect(r.stdout).toBe(s);
      }),
      { numRuns: 40 },
    );
  });

  it('exit 9 ends the shell: the result says so and the next call starts fresh in the workspace', async () => {
    const { root, agent } = setup();
    try {
      await call(agent, 'bash', { command: 'cd /tmp; export GONE=1' });
      const o = await call(agent, 'bash', { command: 'exit 9' });
      expect(text(o)).toBe(`exit\n[shell exited: code 9]\n${SHELL_RESET_MESSAGE}`);
      expect(o.isError).toBe(false);
      expect(o.meta).toMatchObject({ shellExit: { code: 9, signal: null } });
      expect(text(await call(agent, 'bash', { command: 'echo "${GONE:-unset} $PWD"' }))).toBe(`unset ${root}`);
    } finally {
      await agent.dispose();
    }
  });

  it('a timeout kills the shell and what it started, and the next call gets a new shell', async () => {
    const token = `dshpt${randomUUID().slice(0, 8)}`;
    const { root, agent } = setup({ bash: { defaultTimeoutMs: 600 } });
    try {
      await call(agent, 'bash', { command: 'export BEFORE=1' });
      const o = await call(agent, 'bash', { command: `echo partial; exec -a ${token} sleep 30` });
      expect(o.isError).toBe(true);
      expect(o.error).toEqual({ name: 'BashError', code: 'PERSISTENT_BASH_TIMEOUT' });
      expect(text(o)).toBe(`partial\n[timed out after 600 ms; the shell was killed with everything it started]\n${SHELL_RESET_MESSAGE}`);
      await until(() => processesWith(token).length === 0);
      expect(processesWith(token)).toEqual([]);
      expect(text(await call(agent, 'bash', { command: 'echo "${BEFORE:-unset} $PWD"' }))).toBe(`unset ${root}`);
    } finally {
      await agent.dispose();
    }
  });

  it('a cancelled call kills the shell; the next call starts over', async () => {
    const token = `dshpc${randomUUID().slice(0, 8)}`;
    const { agent } = setup();
    try {
      const ac = new AbortController();
      const pending = call(agent, 'bash', { command: `exec -a ${token} sleep 30` }, ac.signal);
      await until(() => processesWith(token).length > 0);
      expect(processesWith(token).length).toBeGreaterThan(0);
      ac.abort();
      await pending;
      await until(() => processesWith(token).length === 0);
      expect(processesWith(token)).toEqual([]);
      expect(text(await call(agent, 'bash', { command: 'echo again' }))).toBe('again');
    } finally {
      await agent.dispose();
    }
  });

  it('closing the session ends the shell and its background processes: nothing is left in /proc', async () => {
    const token = `dshpx${randomUUID().slice(0, 8)}`;
    const { agent } = setup();
    await call(agent, 'bash', { command: `(exec -a ${token} sleep 30) & (setsid bash -c 'exec -a ${token} sleep 31' &) ; echo started` });
    // Both sleeps, once each has exec'd (the subshells before exec do not hold the token as argv[0]).
    await until(() => processesWith(token, true).length === 2);
    expect(processesWith(token, true).length).toBe(2);
    await agent.dispose();
    await until(() => processesWith(token).length === 0);
    expect(processesWith(token)).toEqual([]);
  });

  it('keeps credentials out of the shell environment', async () => {
    process.env.DSH_TEST_API_KEY = 'sk-should-not-leak-persistent';
    try {
      const { agent } = setup({ shellEnv: { GH_TOKEN: 'given' } });
      try {
        expect(text(await call(agent, 'bash', { command: 'echo "${DSH_TEST_API_KEY:-absent} $GH_TOKEN"' }))).toBe('absent given');
        expect(text(await call(agent, 'bash', { command: 'env | grep -c sk-should-not-leak || true' }))).toBe('0');
      } finally {
        await agent.dispose();
      }
    } finally {
      delete process.env.DSH_TEST_API_KEY;
    }
  });

  it('caps long output to head and tail and spills the whole of it to a file', async () => {
    const { agent } = setup({ bash: { maxOutputBytes: 2000 } });
    try {
      const o = await call(agent, 'bash', { command: 'seq 1 5000' });
      const t = text(o);
      expect(t.startsWith('1\n2\n3\n')).toBe(true);
      expect(t).toMatch(/bytes omitted/);
      const spill = (o.meta as { outputSpill?: string }).outputSpill!;
      const full = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join('');
      expect(readFileSync(spill, 'utf8')).toBe(full);
    } finally {
      await agent.dispose();
    }
  });

  it.skipIf(!bwrap.ok)('stays in the bubblewrap sandbox: no writes outside the workspace, a private /tmp, no host processes', async () => {
    const outside = outsideDir();
    const { root, agent } = setup({}, true);
    try {
      const o = await call(agent, 'bash', { command: `cd ${outside} && echo x > escaped.txt` });
      expect(text(o)).toMatch(/Read-only file system/);
      expect(text(o)).toMatch(/\[sandbox: file access denied under workspace-write mode/);
      expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
      // The shell keeps its state inside the sandbox, and the workspace stays writable.
      await call(agent, 'bash', { command: `cd ${root} && echo inside > made.txt` });
      expect(readFileSync(join(root, 'made.txt'), 'utf8')).toBe('inside\n');
      expect(text(await call(agent, 'bash', { command: 'pwd' }))).toBe(root);
      // Its own PID namespace: dsh's process is not there to read.
      expect(text(await call(agent, 'bash', { command: `test -e /proc/${process.pid}/environ && echo visible || echo hidden` }))).toBe(
        'hidden',
      );
    } finally {
      await agent.dispose();
    }
  });
});
