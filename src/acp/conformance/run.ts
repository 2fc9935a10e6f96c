/**
 * Running one scenario through the real `dsh acp`: a scratch copy of the scenario's workspace
 * (made writable: the fixtures are read-only), a private DSH_HOME whose user config trusts that
 * workspace (so a project's hook configuration, installed where Claude Code and Codex keep it, is
 * honoured by whatever bridge reads it), the recorded log with `{{cwd}}` made the scratch path
 * served by `--replay-model` (and the scenario's `replay.override.json` by `--replay-override`), the recorded policy as
 * `--sandbox`/`--approval`, and the official SDK's client driving it from `input.json`,
 * answering permission requests in order. Every byte `dsh acp` writes on stdout is kept: that is
 * what is compared with dsh's.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import {
  client as acpClient,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk/unstable';
import type { Scenario, Step } from './scenario.js';

export interface ScenarioRun {
  stdout: string;
  stderr: string;
  sessionIds: string[];
  cwd: string;
  /** A step the runner could not carry out (an op needing a missing feature, a wait that timed out). */
  error?: string;
}

export interface RunOptions {
  /** How to start dsh: e.g. `[process.execPath, 'bin/dsh.js']`. */
  command: readonly string[];
  /** Longest wait for any one step (default 20 s). */
  stepTimeoutMs?: number;
  keep?: boolean;
}

function makeWritable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) makeWritable(p);
    else chmodSync(p, 0o644);
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function runScenario(s: Scenario, opts: RunOptions): Promise<ScenarioRun> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-conf-')));
  const cwd = join(root, 'ws');
  const home = join(root, 'home');
  const timeout = opts.stepTimeoutMs ?? 20_000;
  mkdirSync(home);
  try {
    if (s.workspace) {
      cpSync(s.workspace, cwd, { recursive: true });
      makeWritable(cwd);
    } else mkdirSync(cwd);
    if (s.hooks.claudeCode) {
      mkdirSync(join(cwd, '.claude'), { recursive: true });
      cpSync(s.hooks.claudeCode, join(cwd, '.claude', 'settings.json'));
    }
    if (s.hooks.codex) {
      mkdirSync(join(cwd, '.codex'), { recursive: true });
      cpSync(s.hooks.codex, join(cwd, '.codex', 'hooks.json'));
    }
    writeFileSync(join(home, 'config.json'), JSON.stringify({ trustedProjects: [cwd] }));
    const log = join(root, 'recorded.jsonl');
    writeFileSync(log, s.sessionText.split('{{cwd}}').join(cwd));

    const [exe, ...pre] = opts.command;
    const args = [...pre, 'acp', '--replay-model', log, '--sandbox', s.policy.sandbox, '--approval', s.policy.approval];
    if (s.overrideFile) args.push('--replay-override', s.overrideFile);
    // The user's own Claude Code / Codex hooks would run beside the scenario's: looked for in the
    // scenario's empty home instead.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DSH_HOME: home,
      DSH_MODEL: '',
      NO_COLOR: '1',
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      CODEX_HOME: join(home, '.codex'),
    };
    for (const k of Object.keys(env)) if (/_API_KEY$/.test(k)) delete env[k];
    const proc = spawn(exe!, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    let stdout = '';
    let stderr = '';
    const toClient = new PassThrough();
    proc.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
      toClient.write(b);
    });
    proc.stdout.on('end', () => toClient.end());
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));

    const answers = [...s.permissionAnswers];
    let scriptError: string | undefined;
    const updates: SessionNotification[] = [];
    let turnStarts = 0;
    const conn = acpClient({ name: 'dsh-conformance' })
      .onRequest(
        methods.client.session.requestPermission,
        ({ params }: { params: RequestPermissionRequest }): RequestPermissionResponse => {
          const kind = answers.shift();
          if (kind === undefined) return { outcome: { outcome: 'cancelled' } };
          const option = params.options.find((o) => o.kind === kind);
          if (!option) {
            scriptError = `input.json answers ${kind}, which the agent did not offer (${params.options.map((o) => o.kind).join(', ')})`;
            return { outcome: { outcome: 'cancelled' } };
          }
          return { outcome: { outcome: 'selected', optionId: option.optionId } };
        },
      )
      .onNotification(methods.client.session.update, ({ params }) => {
        updates.push(params);
      })
      .connect(
        ndJsonStream(Writable.toWeb(proc.stdin) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>),
      );
    const agent = conn.agent;

    const sessionIds: string[] = [];
    const sessionId = (): string => {
      if (!sessionIds[0]) throw new Error('input.json prompts before newSession');
      return sessionIds[0];
    };
    const agentText = (): string =>
      updates
        .map((u) => (u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.type === 'text' ? u.update.content.text : ''))
        .join('');
    let running: Promise<unknown> | undefined;
    const prompt = (text: string): Promise<unknown> => {
      turnStarts++;
      const p = agent.request(methods.agent.session.prompt, { sessionId: sessionId(), prompt: [{ type: 'text', text }] });
      running = p.catch(() => undefined);
      return p;
    };

    const runStep = async (step: Step): Promise<void> => {
      switch (step.op) {
        case 'initialize':
          await agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
          return;
        case 'newSession':
          sessionIds.push((await agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId);
          return;
        case 'prompt':
          await withTimeout(prompt(step.text), timeout, 'the prompt');
          return;
        case 'promptExpectError':
          await withTimeout(
            prompt(step.text).then(
              () => {
                throw new Error('the prompt was expected to fail, and it ended normally');
              },
              () => undefined,
            ),
            timeout,
            'the prompt',
          );
          return;
        case 'promptAndWaitForAgentMessage':
          void prompt(step.text).catch(() => undefined);
          await waitUntil(() => agentText().includes(step.waitForText), timeout, `an agent message ${JSON.stringify(step.waitForText)}`);
          return;
        case 'promptAndCancel': {
          const done = prompt(step.text).catch(() => undefined);
          if (step.waitForFile) {
            const file = resolve(cwd, step.waitForFile.path);
            await waitUntil(() => existsSync(file), step.waitForFile.timeoutMs ?? timeout, `the file ${step.waitForFile.path}`);
          }
          await agent.notify(methods.agent.session.cancel, { sessionId: sessionId() });
          await withTimeout(done, timeout, 'the cancelled prompt');
          return;
        }
        case 'waitForTurnStart':
          // Only the turns this client started exist here: a turn dsh starts on its own (a
          // subagent's report) needs that feature.
          if ((step.minimumTurn ?? 1) > turnStarts)
            throw new Error(`waitForTurnStart ${step.minimumTurn}: needs turns started by the agent itself`);
          return;
        case 'waitForTurnEnd':
          if (running) await withTimeout(running, timeout, 'the turn');
          return;
        case 'unsupported':
          throw new Error(`the step "${step.name}" needs a feature this agent does not have`);
      }
    };

    let error: string | undefined;
    try {
      for (const step of s.steps) {
        await runStep(step);
        if (scriptError) throw new Error(scriptError);
      }
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    proc.stdin.end();
    const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    conn.close();
    const run: ScenarioRun = { stdout, stderr, sessionIds, cwd };
    if (error !== undefined) run.error = error;
    return run;
  } finally {
    if (!opts.keep) rmSync(root, { recursive: true, force: true });
  }
}
