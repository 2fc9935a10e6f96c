/**
 * Nothing a tool runs outlives dsh, and the network switch, against the real binary.
 *
 * Orphans: the scripted model starts a background job (which also daemonizes a grandchild with
 * `setsid`) and then a foreground command; each reports "started" to a TCP listener of the test's
 * and would report "late" after a few seconds. Once both have started, dsh is SIGKILLed (no
 * handler runs), in every mode, with and without bubblewrap. Then: no "late" report ever arrives,
 * and no process whose argv carries the run's token is alive.
 */
import { createServer, type Server } from 'node:net';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatStream } from '../support/faults.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { spawnDsh } from './support/driver.js';
import { agentEnv, gitRepo, logEvents, storedLogs, tempDir } from './support/agent.js';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';

let listener: Server;
let port = 0;
const heard: string[] = [];
beforeAll(async () => {
  listener = createServer((s) => {
    s.setEncoding('utf8');
    s.on('data', (d: string) => heard.push(...d.split('\n').filter(Boolean)));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => listener.close(() => r())));

const report = (what: string): string => `echo ${what} > /dev/tcp/127.0.0.1/${port}`;

/** Processes (any user can see) whose command line carries `token`. */
function alive(token: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(token) && !cmd.includes('vitest')) out.push(`${pid}: ${cmd}`);
    } catch {
      // gone
    }
  }
  return out;
}

function toolCalls(calls: { id: string; args: Record<string, unknown> }[]) {
  return { sse: chatStream({ toolCalls: calls.map((c) => ({ id: c.id, name: 'bash', args: [JSON.stringify(c.args)] })) }) };
}

async function until(test: () => boolean, ms: number): Promise<boolean> {
  for (let t = 0; t < ms && !test(); t += 50) await new Promise((r) => setTimeout(r, 50));
  return test();
}

interface Case {
  name: string;
  mode: 'read-only' | 'workspace-write' | 'danger-full-access';
  bubblewrap: boolean;
}

async function killDuringTools(
  c: Case,
  provider: { url: string },
  token: string,
): Promise<{ late: string[]; survivors: string[]; stderr: string }> {
  const home = tempDir();
  const args = ['run', '--cwd', gitRepo(), '--sandbox', c.mode, '--approval', 'never'];
  if (!c.bubblewrap) {
    const cfg = join(tempDir(), 'config.json');
    writeFileSync(cfg, JSON.stringify({ sandbox: { bubblewrap: false } }));
    args.push('--config', cfg);
  }
  const run = spawnDsh([...args, `orphans ${token}`], { env: agentEnv(provider.url, home) });
  const started = (): boolean => ['fg', 'bg', 'daemon'].every((w) => heard.includes(`${w}-started-${token}`));
  const ok = await until(started, 30_000);
  run.kill('SIGKILL');
  await run.done;
  if (!ok) {
    const results = storedLogs(home).flatMap((l) =>
      logEvents(l)
        .filter((e) => e.type === 'tool/result')
        .map((e) => JSON.stringify(e.data).slice(0, 600)),
    );
    throw new Error(`${c.name}: the commands never started (heard: ${heard.join(', ')})\n${run.transcript.stderr}\n${results.join('\n')}`);
  }
  // Every "late" report would come 3-5 s after its start.
  await new Promise((r) => setTimeout(r, 6000));
  return { late: heard.filter((h) => h.includes(token) && h.includes('-late-')), survivors: alive(token), stderr: run.transcript.stderr };
}

const bwrap = await probeBubblewrap('bwrap');
const cases: Case[] = [
  ...(bwrap.ok
    ? ([
        { name: 'read-only (bubblewrap)', mode: 'read-only', bubblewrap: true },
        { name: 'workspace-write (bubblewrap)', mode: 'workspace-write', bubblewrap: true },
        { name: 'danger-full-access (bubblewrap)', mode: 'danger-full-access', bubblewrap: true },
      ] as const)
    : []),
  { name: 'workspace-write, no bubblewrap (the reaper)', mode: 'workspace-write', bubblewrap: false },
  { name: 'danger-full-access, no bubblewrap (the reaper)', mode: 'danger-full-access', bubblewrap: false },
];

describe('no orphans: SIGKILL of dsh while a tool and a background job run', () => {
  it(`ends every process they started, in every mode (${cases.map((c) => c.name).join('; ')})`, { timeout: 90_000 }, async () => {
    const tokens = new Map(cases.map((c) => [c.name, `dshorphan${randomBytes(4).toString('hex')}`]));
    const providers: FakeProvider[] = [];
    try {
      const results = await Promise.all(
        cases.map(async (c) => {
          const token = tokens.get(c.name)!;
          const bg = [
            report(`bg-started-${token}`),
            `setsid bash -c '${report(`daemon-started-${token}`)}; (exec -a ${token}-daemon sleep 5); ${report(`daemon-late-${token}`)}' &`,
            `(exec -a ${token}-bg sleep 4); ${report(`bg-late-${token}`)}`,
          ].join('\n');
          const fg = `sleep 0.3; ${report(`fg-started-${token}`)}; (exec -a ${token}-fg sleep 3); ${report(`fg-late-${token}`)}`;
          const provider = await startFakeProvider({
            script: (_req, n) =>
              n === 0
                ? toolCalls([
                    { id: 'call_bg', args: { command: bg, run_in_background: true } },
                    { id: 'call_fg', args: { command: fg, timeoutMs: 60_000 } },
                  ])
                : { sse: chatStream({ text: ['done'] }) },
          });
          providers.push(provider);
          return { c, ...(await killDuringTools(c, provider, token)) };
        }),
      );
      for (const r of results) {
        expect(r.late, r.c.name).toEqual([]);
        expect(r.survivors, r.c.name).toEqual([]);
      }
    } finally {
      await Promise.all(providers.map((p) => p.close()));
    }
  });
});

describe('network switch', () => {
  async function runWith(extra: string[], config?: object): Promise<{ result: string; modeEvents: unknown[] }> {
    const token = `dshnet${randomBytes(4).toString('hex')}`;
    const provider = await startFakeProvider({
      script: (_req, n) =>
        n === 0
          ? toolCalls([{ id: 'call_net', args: { command: `${report(`net-${token}`)} && echo reached || echo unreachable` } }])
          : { sse: chatStream({ text: ['done'] }) },
    });
    try {
      const home = tempDir();
      const args = ['run', '--cwd', gitRepo(), '--approval', 'never', ...extra];
      if (config) {
        const cfg = join(tempDir(), 'config.json');
        writeFileSync(cfg, JSON.stringify(config));
        args.push('--config', cfg);
      }
      const run = spawnDsh([...args, 'net'], { env: agentEnv(provider.url, home) });
      await run.done;
      const events = logEvents(storedLogs(home)[0]!);
      const result = events.find((e) => e.type === 'tool/result');
      return {
        result: JSON.stringify(result?.data ?? run.transcript.stderr),
        modeEvents: events.filter((e) => e.type === 'sandbox/mode').map((e) => e.data),
      };
    } finally {
      await provider.close();
    }
  }

  it('on by default: a command reaches a local listener, and sandbox/mode is logged as dsh logs it', { timeout: 60_000 }, async () => {
    const r = await runWith([]);
    expect(r.result).toContain('reached');
    expect(r.modeEvents).toEqual([{ mode: 'workspace-write', source: 'config' }]);
  });

  it.skipIf(!bwrap.ok)(
    '--no-network (and sandbox.network: false) cut it in every mode, and sandbox/mode records network: disabled',
    { timeout: 90_000 },
    async () => {
      for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
        const r = await runWith(['--sandbox', mode, '--no-network']);
        expect(r.result, mode).toContain('unreachable');
        expect(r.result, mode).not.toContain('reached\\n');
        expect(r.modeEvents, mode).toEqual([{ mode, source: 'config', network: 'disabled' }]);
      }
      const fromConfig = await runWith([], { sandbox: { network: false } });
      expect(fromConfig.result).toContain('unreachable');
      expect(fromConfig.modeEvents).toEqual([{ mode: 'workspace-write', source: 'config', network: 'disabled' }]);
    },
  );

  it('--no-network where bubblewrap cannot run refuses the command instead of running it with a network', { timeout: 60_000 }, async () => {
    const r = await runWith(['--no-network'], { sandbox: { bubblewrap: false } });
    expect(r.result).toContain('SANDBOX_NETWORK_UNAVAILABLE');
    expect(r.result).not.toContain('reached');
  });
});
