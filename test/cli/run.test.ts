/**
 * `dsh run`: one task against a fake DeepSeek provider (the real SDK over HTTP on 127.0.0.1) in a
 * scratch git repository, with a private DSH_HOME. The end-to-end case runs the real binary; the
 * rest run `main()` in this process, which is the same code without the process start.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLogFile } from '../../src/store/load.js';
import { startFakeProvider, type FakeProvider, type FakeScript } from '../support/fake-provider.js';
import { fault } from '../support/faults.js';
import { dsh } from './support/run.js';
import { runMain } from './support/inproc.js';
import {
  agentEnv,
  ANSWER,
  call,
  FIXED_README,
  gitRepo,
  logEvents,
  logPathFrom,
  storedLogs,
  tempDir,
  text,
  turnEnds,
  typoFixScript,
  TYPO_README,
} from './support/agent.js';

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});
async function fake(script: FakeScript): Promise<FakeProvider> {
  provider = await startFakeProvider({ script });
  return provider;
}

/** A workspace with one completed session (turn 1), its log path, and the env that reaches the fake. */
async function oneTurnSession(): Promise<{
  repo: string;
  home: string;
  env: NodeJS.ProcessEnv;
  path: string;
  p: FakeProvider;
  stderr: string;
}> {
  const repo = gitRepo();
  const home = tempDir();
  const p = await fake((_req, n) => text([`answer ${n}`]));
  const env = agentEnv(p.url, home);
  const first = await runMain(['run', '--cwd', repo, 'first task'], env);
  expect(first.code, first.stderr).toBe(0);
  return { repo, home, env, path: logPathFrom(first.stderr), p, stderr: first.stderr };
}

interface ChatMessage {
  role: string;
  content: unknown;
}
const messagesOf = (p: FakeProvider, n: number): ChatMessage[] => (p.requests[n]!.body as { messages: ChatMessage[] }).messages;

describe('dsh run', () => {
  // Four model calls, a ripgrep sandbox and a log check through the real binary: on a loaded
  // machine that alone can pass 30 s, and how long it takes is not what this test checks.
  it('fixes a typo end to end: grep, read, edit, the answer streamed to stdout, a stored log that checks', {
    timeout: 180_000,
  }, async () => {
    const repo = gitRepo();
    const home = tempDir();
    const p = await fake(typoFixScript());
    const r = await dsh(['run', '--cwd', repo, 'Fix the typo in README.md'], { env: agentEnv(p.url, home) });
    expect(r.code, r.stderr).toBe(0);

    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe(FIXED_README);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repo }).toString()).toBe(' M README.md\n');
    expect(r.stdout).toBe(`${ANSWER.join('')}\n`);

    const err = r.stderr.split('\n');
    expect(err).toContain('→ grep {"pattern":"recieve","path":"."}');
    expect(err).toContain('← grep ok');
    expect(err).toContain('→ read {"file_path":"README.md"}');
    expect(err).toContain('← read ok');
    expect(err.some((l) => l.startsWith('→ edit {"file_path":"README.md","old_string":"to recieve only"'))).toBe(true);
    expect(err).toContain('← edit ok');
    // Usage: three calls at the fake's default (10 in, 5 out) and the answer (120 in, 14 out).
    expect(err.at(-2)).toMatch(/^session [0-9a-f-]{36} · log \S+ · turn 1 · 4 steps · in 150 · out 29 · cache read 0 · completed$/);

    const logs = storedLogs(home);
    expect(logs).toEqual([logPathFrom(r.stderr)]);
    const check = await runMain(['log', 'check', logs[0]!]);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toMatch(/: ok · \d+ events in \d+ rows · 1 turn · 4 steps · \d+ messages$/m);

    // What the model was sent: the task first, and the read's real output before the edit.
    expect(p.requests).toHaveLength(4);
    expect(JSON.stringify(messagesOf(p, 0))).toContain('Fix the typo in README.md');
    expect(JSON.stringify(messagesOf(p, 2))).toContain('Pass --quiet to recieve only errors.');
    const events = logEvents(logs[0]!);
    expect(turnEnds(events).map((e) => e.data.reason.kind)).toEqual(['completed']);
    expect(events.filter((e) => e.type === 'tool/call').map((e) => (e.type === 'tool/call' ? e.data.name : ''))).toEqual([
      'grep',
      'read',
      'edit',
    ]);
  });

  it('without DEEPSEEK_API_KEY: one line naming the variable, exit 1, and no session created', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const env = agentEnv('http://127.0.0.1:9', home);
    delete env.DEEPSEEK_API_KEY;
    const r = await runMain(['run', '--cwd', repo, 'Fix the typo'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'dsh: DEEPSEEK_API_KEY is not set: export it, or set providers.deepseek.apiKey in the config file [MISSING_CREDENTIAL]\n',
    );
    expect(storedLogs(home)).toEqual([]);
  });

  it('--json prints every committed event as one JSON line, equal to the stored log', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const p = await fake(typoFixScript());
    const r = await runMain(['run', '--json', '--cwd', repo, 'Fix the typo in README.md'], agentEnv(p.url, home));
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    const path = storedLogs(home)[0]!;
    const events = logEvents(path);
    const header = JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as { id: string };
    // The first line names the session and its log, before any event.
    expect(lines[0]).toEqual({ type: 'dsh/run', sessionId: header.id, path, cwd: repo, resumed: false });
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.slice(1)).toEqual(JSON.parse(JSON.stringify(events)));
    // No streamed prose and no tool lines mixed into the JSON stream.
    expect(r.stderr).not.toContain('→ grep');
  });

  it('-q prints only the final answer', async () => {
    const repo = gitRepo();
    const p = await fake(typoFixScript());
    const r = await runMain(['run', '-q', '--cwd', repo, 'Fix the typo in README.md'], agentEnv(p.url, tempDir()));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${ANSWER.join('')}\n`);
    expect(r.stderr).toBe('');
  });

  it('a provider error ends the turn with its code and exit 1', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const p = await fake([fault('unauthorized')]);
    const r = await runMain(['run', '--cwd', repo, 'Fix the typo'], agentEnv(p.url, home));
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(/· turn 1 · 1 step · no usage · error AUTH \(HTTP 401\): .*Authentication Fails/);
    const ends = turnEnds(logEvents(storedLogs(home)[0]!));
    expect(ends.map((e) => e.data.reason)).toEqual([
      expect.objectContaining({ kind: 'error', error: expect.objectContaining({ code: 'AUTH', status: 401 }) }),
    ]);
  });

  it('--continue and --resume continue the same log with the next turn number', async () => {
    const { repo, home, env, path, p, stderr: firstErr } = await oneTurnSession();

    const second = await runMain(['run', '--cwd', repo, '--continue', 'second task'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(logPathFrom(second.stderr)).toBe(path);
    expect(second.stderr).toMatch(/\(resumed at turn 2\)/);

    const id = /session ([0-9a-f-]{36})/.exec(firstErr)![1]!;
    // From another directory: the session keeps its workspace.
    const third = await runMain(['run', '--resume', id.slice(0, 8), 'third task'], env);
    expect(third.code, third.stderr).toBe(0);
    expect(logPathFrom(third.stderr)).toBe(path);

    expect(storedLogs(home)).toEqual([path]);
    const events = logEvents(path);
    expect(events.filter((e) => e.type === 'turn/start').map((e) => (e.type === 'turn/start' ? e.data.turn : 0))).toEqual([1, 2, 3]);
    expect(turnEnds(events).map((e) => e.data.reason.kind)).toEqual(['completed', 'completed', 'completed']);
    // The resumed model call carries the earlier turns.
    const sent = JSON.stringify(messagesOf(p, 2));
    for (const s of ['first task', 'answer 0', 'second task', 'answer 1', 'third task']) expect(sent).toContain(s);
    // Each run wrote to the log alone and closed it: its resume index was restamped, so the next
    // resume takes the prefix by its stat, unread (the writer's chain of stamps held through a run).
    expect((await readLogFile(path, { resumeIndex: true })).prefixCheckedBy).toBe('stat');
  });

  // Issue 11 item 3: a last line nested ~6,000 levels deep once made `run --continue` die with
  // "Maximum call stack size exceeded" instead of setting the line aside. Through the real binary:
  // a torn last line (deep or cut) is moved to a sidecar and the session continues; a deep value
  // in a committed, well-placed event is refused with one typed line and the log left as it was.
  const deep = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
  it.each([
    ['a seq nested 6,000 levels deep', (_seq: number) => `{"type":"turn/start","seq":${deep(6_000)},"time":1,"data":{"turn":2}}\n`],
    ['a line cut inside 6,000 levels of nesting', () => `{"type":"turn/start","seq":1,"time":1,"data":${'['.repeat(6_000)}`],
    ['a line cut mid-string, no newline', (seq: number) => `{"type":"turn/start","seq":${seq},"time":1,"data":{"tu`],
    ['a NUL-padded tail', () => '\0'.repeat(64)],
  ])(
    'run --continue on a log whose last line is %s: the line is set aside as a torn tail and the turn runs',
    async (_what, tail) => {
      const { repo, env, path } = await oneTurnSession();
      const good = readFileSync(path);
      const torn = tail(logEvents(path).length);
      appendFileSync(path, torn);

      const second = await dsh(['run', '--cwd', repo, '--continue', 'second task'], { env });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).not.toMatch(/internal error|RangeError|Maximum call stack/);
      expect(second.stderr).toMatch(/torn tail at line \d+/);
      expect(second.stderr).toMatch(/\(resumed at turn 2\)/);
      // The torn bytes are kept, whole, in a sidecar; the log continues from the good bytes.
      const sidecars = readdirSync(dirname(path)).filter((f) => f.startsWith('session.jsonl.torn-'));
      expect(sidecars).toHaveLength(1);
      expect(readFileSync(join(dirname(path), sidecars[0]!), 'utf8')).toBe(torn);
      expect(readFileSync(path).subarray(0, good.length).equals(good)).toBe(true);
      const check = await runMain(['log', 'check', path], env);
      expect(check.code, check.stdout).toBe(0);
      expect(turnEnds(logEvents(path)).map((e) => e.data.reason.kind)).toEqual(['completed', 'completed']);
    },
    120_000,
  );

  it('run --continue on a log whose committed last turn holds a value 6,000 levels deep: one typed line, the log untouched', async () => {
    const { repo, env, path } = await oneTurnSession();
    const n = logEvents(path).length;
    // A well-placed turn/start whose data is deep, then a turn/end: committed, so not a torn tail.
    appendFileSync(
      path,
      `{"type":"turn/start","seq":${n},"time":1,"data":${deep(6_000)}}\n{"type":"turn/end","seq":${n + 1},"time":1,` +
        '"data":{"turn":2,"reason":{"kind":"completed"}}}\n',
    );
    const before = readFileSync(path);
    const second = await dsh(['run', '--cwd', repo, '--continue', 'second task'], { env });
    expect(second.code).toBe(1);
    expect(second.stderr).not.toMatch(/internal error|RangeError|Maximum call stack/);
    expect(second.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(new RegExp(`session\\.jsonl:${n + 2}: error INVALID_EVENT \\(seq ${n}, `));
    expect(second.stderr.length).toBeLessThan(1_000);
    expect(readFileSync(path).equals(before)).toBe(true);
  }, 120_000);

  it('--continue with no session for the workspace fails with one line', async () => {
    const p = await fake([]);
    const r = await runMain(['run', '--cwd', gitRepo(), '--continue', 'x'], agentEnv(p.url, tempDir()));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^dsh: no stored session for \S+ under \S+; start one without --continue \[SESSION_NOT_FOUND\]\n$/);
  });

  it('refuses what needs approval, says so, and names the flag that allows it; the flag works', async () => {
    const repo = gitRepo();
    const home = tempDir();
    // bash asks whenever the shell sandbox is only partially enforced: here, by configuration.
    const config = join(tempDir(), 'config.json');
    writeFileSync(config, JSON.stringify({ sandbox: { bubblewrap: false } }));
    const script = (): FakeScript => [call('call_touch', 'bash', { command: 'touch made.txt' }), text(['Done.'])];
    const p1 = await fake(script());
    const refused = await runMain(['run', '--config', config, '--cwd', repo, 'create made.txt'], agentEnv(p1.url, home));
    expect(refused.code, refused.stderr).toBe(0);
    expect(existsSync(join(repo, 'made.txt'))).toBe(false);
    const err = refused.stderr.split('\n');
    expect(
      err.some((l) => /^warning: the workspace-write sandbox is only partially enforced on this machine \(.*disabled.*\)/.test(l)),
    ).toBe(true);
    expect(
      err.some((l) =>
        l.startsWith(
          '← bash error APPROVAL_UNAVAILABLE: bash: it needs approval and no one can approve in this session (non-interactive); ' +
            'it was not run',
        ),
      ),
    ).toBe(true);
    expect(err).toContain(
      "hint: bash needed approval, and dsh run cannot ask; to allow it, run again with --allow 'bash(touch made.txt)' (or " +
        '--full-auto), or use dsh chat',
    );
    const decided = logEvents(logPathFrom(refused.stderr)).filter((e) => e.type === 'approval/decided');
    expect(decided.map((e) => (e.type === 'approval/decided' ? e.data.outcome : ''))).toEqual(['unavailable']);

    await provider!.close();
    const p2 = await fake(script());
    const allowed = await runMain(
      ['run', '--config', config, '--allow', 'bash(touch made.txt)', '--cwd', repo, 'create made.txt'],
      agentEnv(p2.url, home),
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain('← bash ok');
    expect(existsSync(join(repo, 'made.txt'))).toBe(true);

    // --full-auto: no approvals at all (inside the workspace-write sandbox, as far as it is enforced).
    await provider!.close();
    const p3 = await fake([call('call_touch', 'bash', { command: 'touch auto.txt' }), text(['Done.'])]);
    const auto = await runMain(['run', '--config', config, '--full-auto', '--cwd', repo, 'create auto.txt'], agentEnv(p3.url, home));
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stderr).toMatch(/· sandbox workspace-write · approval never$/m);
    expect(existsSync(join(repo, 'auto.txt'))).toBe(true);
  });

  it('--fail-on-denied exits 3 naming each refused call (no approver, a deny rule); 0 when nothing was refused', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const config = join(tempDir(), 'config.json');
    writeFileSync(config, JSON.stringify({ sandbox: { bubblewrap: false } }));
    const script = (cmd: string): FakeScript => [call('call_1', 'bash', { command: cmd }), text(['Done.'])];
    const base = ['run', '--fail-on-denied', '--config', config, '--cwd', repo];

    const p1 = await fake(script('touch a.txt'));
    const unavailable = await runMain([...base, 'create a.txt'], agentEnv(p1.url, home));
    expect(unavailable.code, unavailable.stderr).toBe(3);
    expect(unavailable.stderr).toContain('dsh: 1 tool call was refused: bash (APPROVAL_UNAVAILABLE) [REFUSED]\n');
    // Without the flag the same run is the turn's own verdict: completed, 0 (the test above).

    await provider!.close();
    const p2 = await fake(script('touch b.txt'));
    const denied = await runMain([...base, '--full-auto', '--deny', 'bash(touch*)', 'create b.txt'], agentEnv(p2.url, home));
    expect(denied.code, denied.stderr).toBe(3);
    expect(denied.stderr).toContain('dsh: 1 tool call was refused: bash (DENIED) [REFUSED]\n');
    expect(existsSync(join(repo, 'b.txt'))).toBe(false);

    await provider!.close();
    const p3 = await fake(script('touch c.txt'));
    const allowed = await runMain([...base, '--allow', 'bash(touch c.txt)', 'create c.txt'], agentEnv(p3.url, home));
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).not.toContain('[REFUSED]');
    expect(existsSync(join(repo, 'c.txt'))).toBe(true);

    // Workspace confinement is a refusal too: a read outside the workspace, under --full-auto.
    await provider!.close();
    const outside = join(tempDir(), 'outside.txt');
    writeFileSync(outside, 'not yours\n');
    const p4 = await fake([call('call_1', 'read', { file_path: outside }), text(['Done.'])]);
    const confined = await runMain([...base, '--full-auto', 'read it'], agentEnv(p4.url, home));
    expect(confined.code, confined.stderr).toBe(3);
    expect(confined.stderr).toContain('dsh: 1 tool call was refused: read (FS_OUTSIDE_WORKSPACE) [REFUSED]\n');
  });

  it('--model, --max-tokens and --reasoning-effort reach the request and the logged header', async () => {
    const home = tempDir();
    const p = await fake([text(['ok'])]);
    const r = await runMain(
      ['run', '--model', 'deepseek:deepseek-v4-pro', '--max-tokens', '256', '--reasoning-effort', 'high', '--cwd', gitRepo(), 'x'],
      agentEnv(p.url, home),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(p.requests[0]!.body).toMatchObject({ model: 'deepseek-v4-pro', max_tokens: 256 });
    const header = logEvents(storedLogs(home)[0]!).find((e) => e.type === 'request/header');
    expect(header?.type === 'request/header' && header.data.header.config).toMatchObject({
      provider: 'deepseek',
      model: 'deepseek-v4-pro',
      maxTokens: 256,
      reasoningEffort: 'high',
    });
  });

  it('--sandbox read-only refuses file changes', async () => {
    const repo = gitRepo();
    const p = await fake([
      call('call_edit', 'edit', { file_path: 'README.md', old_string: 'recieve', new_string: 'receive' }),
      text(['I cannot edit here.']),
    ]);
    const r = await runMain(['run', '--sandbox', 'read-only', '--cwd', repo, 'Fix the typo'], agentEnv(p.url, tempDir()));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^← edit error FS_SANDBOX_DENIED: /m);
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe(TYPO_README);
  });

  it('what the model and its tools print cannot drive the terminal', async () => {
    const ESC = '\x1b';
    const evil = `${ESC}]0;pwned\u0007${ESC}[2J\u202eevil\r`;
    const repo = gitRepo({ [`notes.txt`]: `${evil}\n` });
    const p = await fake([call('call_read', 'read', { file_path: `missing${ESC}[31m.txt` }), text([`Here: ${evil}`, ' done'])]);
    const r = await runMain(['run', '--cwd', repo, 'x'], agentEnv(p.url, tempDir()));
    expect(r.code, r.stderr).toBe(0);
    for (const raw of [ESC, '\u0007', '\u202e', '\r']) {
      expect(r.stdout.includes(raw), JSON.stringify(raw)).toBe(false);
      expect(r.stderr.includes(raw), JSON.stringify(raw)).toBe(false);
    }
    expect(r.stdout).toBe('Here: \\e]0;pwned\\x07\\e[2J\\u202eevil\\r done\n');
    // The call line shows the arguments as JSON text: JSON writes ESC as the six characters
    // `\u001b`, whose backslash the one-line escape doubles so that it cannot pass for a real ESC.
    expect(r.stderr).toContain('→ read {"file_path":"missing\\\\u001b[31m.txt"}');
  });

  it('an ask rule cannot be lifted by flags: the hint says only a person can approve', async () => {
    const repo = gitRepo();
    const p = await fake([call('call_w', 'write', { file_path: 'notes.txt', content: 'hi' }), text(['I could not write it.'])]);
    const r = await runMain(['run', '--ask', 'write(*)', '--cwd', repo, 'write notes.txt'], agentEnv(p.url, tempDir()));
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(repo, 'notes.txt'))).toBe(false);
    expect(r.stderr).toContain(
      'hint: write matches the ask rule "write(*)", so only a person can approve it: use dsh chat, or remove that rule',
    );
  });

  it('usage errors exit 2 before anything starts', async () => {
    const home = tempDir();
    const env = agentEnv('http://127.0.0.1:9', home);
    const cases: [string[], RegExp][] = [
      [['run', '--resume', 'abcd', '--continue', 'x'], /^dsh: --resume and --continue both pick the session; give one of them \[USAGE\]$/],
      [['run', '--no-persist', '--continue', 'x'], /^dsh: --no-persist cannot be combined with --resume or --continue/],
      // dsh run has no session picker, so its --resume takes a required <id> (as its help says).
      [['run', 'x', '--resume'], /^dsh: error: option '-r, --resume <id>' argument missing/],
      [['run', '--json', '-q', 'x'], /^dsh: --json and --quiet choose different outputs/],
      [
        ['run', '--allow', 'bash(', 'x'],
        new RegExp(
          "^dsh: error: option '--allow <rule>' argument 'bash\\(' is invalid\\. " +
            'permission rule "bash\\(" must be written tool or tool\\(pattern\\)',
        ),
      ],
      [
        ['run', '--sandbox', 'none', 'x'],
        new RegExp(
          "^dsh: error: option '--sandbox <mode>' argument 'none' is invalid\\. " +
            'Allowed choices are read-only, workspace-write, danger-full-access\\.',
        ),
      ],
      [['run', '--max-tokens', '0', 'x'], /^dsh: error: option '--max-tokens <n>' argument '0' is invalid\. expected a positive integer/],
      [
        ['run'],
        /^dsh: no task: give it as arguments \(dsh run "fix the failing test"\) or on standard input \(dsh run - < task\.md\) \[NO_TASK\]$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await runMain(argv, env);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
    expect(storedLogs(home)).toEqual([]);
  });

  it('--cwd that is not a directory fails with one line', async () => {
    const file = join(gitRepo(), 'README.md');
    const r = await runMain(['run', '--cwd', file, 'x'], agentEnv('http://127.0.0.1:9', tempDir()));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`dsh: ${file}: not a directory [NOT_A_DIRECTORY]\n`);
  });

  it('reads the task from standard input with -', async () => {
    const repo = gitRepo();
    const p = await fake([text(['ok'])]);
    const r = await dsh(['run', '-q', '--cwd', repo, '-'], { env: agentEnv(p.url, tempDir()), input: 'Task from a pipe\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('ok\n');
    expect(JSON.stringify(messagesOf(p, 0))).toContain('Task from a pipe');
  });

  it('--no-persist writes nothing under DSH_HOME', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const p = await fake([text(['done'])]);
    const r = await runMain(['run', '--no-persist', '--cwd', repo, 'x'], agentEnv(p.url, home));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(/^session \S+ · log not persisted \(--no-persist\) · turn 1 · 1 step · /);
    expect(storedLogs(home)).toEqual([]);
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe(TYPO_README);
  });
});
