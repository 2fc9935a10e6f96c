/**
 * No key within a tool's reach, and no configured secret in any printed or logged error, against
 * the real binary.
 *
 * Keys: dsh starts with every kind of secret in its environment and config (the selected
 * provider's key, the other built-in providers' keys and copies of them under innocent names,
 * names the credential filter must catch, a configured provider's `apiKeyEnv` with a plain name,
 * a configured header value and a base-URL token, each also copied into another variable). The
 * scripted model runs `env`, every readable `/proc/<pid>/environ` (dsh's own included where it is
 * visible) and `ps e` for every process, in every mode with and without bubblewrap, and reads the
 * config file that holds a literal key (`cat` only under bubblewrap: without it nothing can hide a
 * file from a process of the same user, as docs/tools.md says). Not one secret may come back, in
 * the result or in its spilled output.
 *
 * Redaction: a local gateway answers every request with an error body quoting every request
 * header and the URL; the run retries, fails, and its stderr, `--json` stdout and stored log must
 * hold `[REDACTED]` and none of the key, the header value or the URL token.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { chatStream } from '../support/faults.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { spawnDsh } from './support/driver.js';
import { builtBin } from './support/run.js';
import { spawn } from 'node:child_process';
import { agentEnv, gitRepo, logEvents, storedLogs, tempDir } from './support/agent.js';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';

const secret = (label: string): string => `${label}-${randomBytes(12).toString('hex')}`;

interface Secrets {
  env: Record<string, string>;
  config: object;
  values: string[];
}

function secrets(): Secrets {
  const deepseek = secret('sk-ds');
  const openai = secret('sk-oa');
  const anthropic = secret('sk-ant');
  const gwKey = secret('gwkey');
  const literal = secret('sk-literal');
  const header = secret('hdr');
  const urlToken = secret('urltok');
  const names = {
    GH_AUTH: secret('ghauth'),
    SOME_TOKEN: secret('tok'),
    DB_PASSWORD: secret('pw'),
    CLOUD_CREDENTIALS: secret('cred'),
    SERVICE_KEY: secret('svc'),
    MY_SECRET_THING: secret('sec'),
  };
  return {
    env: {
      DEEPSEEK_API_KEY: deepseek,
      OPENAI_API_KEY: openai,
      ANTHROPIC_API_KEY: anthropic,
      // Copies under names no filter would catch.
      PLAIN_COPY_A: openai,
      PLAIN_COPY_B: `Bearer ${anthropic}`,
      PLAIN_COPY_C: deepseek,
      GW_ACCESS: gwKey,
      PLAIN_COPY_D: header,
      PLAIN_COPY_E: `https://gw.example/v1?token=${urlToken}`,
      ...names,
    },
    config: {
      providers: {
        gw: { baseUrl: `http://127.0.0.1:9/v1?token=${urlToken}`, apiKeyEnv: 'GW_ACCESS', headers: { 'X-Gateway-Secret': header } },
        // A key written in the file: the file itself must be out of reach.
        lit: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: literal },
      },
    },
    values: [deepseek, openai, anthropic, gwKey, header, urlToken, literal, ...Object.values(names)],
  };
}

const bwrap = await probeBubblewrap('bwrap');
const modes = [
  ...(bwrap.ok ? (['read-only', 'workspace-write', 'danger-full-access'] as const).map((mode) => ({ mode, bubblewrap: true })) : []),
  { mode: 'workspace-write' as const, bubblewrap: false },
  { mode: 'danger-full-access' as const, bubblewrap: false },
];
const modeNames = modes.map((m) => `${m.mode}${m.bubblewrap ? '' : ' without bubblewrap'}`).join('; ');

/** Every environment the tool can see: its own, every readable process's, and `ps e`'s. */
const PROBE = [
  'echo "== env"; env',
  'echo "== parent $PPID"; tr "\\0" "\\n" < /proc/$PPID/environ',
  'echo "== all"; for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ 2>/dev/null; echo; done',
  'echo "== ps"; ps -A e -ww -o pid=,args= 2>&1',
  'echo "== done"',
].join('\n');

describe('no key within a tool’s reach', () => {
  it(`env, /proc/*/environ and ps e show no secret (${modeNames})`, {
    timeout: 240_000,
  }, async () => {
    const s = secrets();
    // Outside /tmp, which is private inside bubblewrap: the config must be there to be hidden.
    const cfgDir = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'dsh-keys-cfg-'));
    const cfgs = modes.map((m, i) => {
      const f = join(cfgDir, `config-${i}.json`);
      writeFileSync(f, JSON.stringify({ ...s.config, ...(m.bubblewrap ? {} : { sandbox: { bubblewrap: false } }) }));
      return f;
    });
    const providers = await Promise.all(
      modes.map((_m, i) =>
        startFakeProvider({
          script: (_req, n) =>
            n === 0
              ? {
                  sse: chatStream({
                    toolCalls: [
                      {
                        id: 'call_probe',
                        name: 'bash',
                        args: [
                          JSON.stringify({
                            command:
                              `${PROBE}\necho "== cfg"; ` +
                              `${modes[i]!.bubblewrap ? `cat ${cfgs[i]!}` : ': no bubblewrap, no mount to hide it under'}`,
                          }),
                        ],
                      },
                      { id: 'call_read', name: 'read', args: [JSON.stringify({ file_path: cfgs[i]! })] },
                    ],
                  }),
                }
              : { sse: chatStream({ text: ['done'] }) },
        }),
      ),
    );
    try {
      // One mode at a time: without bubblewrap a probe sees every process of the user, so a sibling
      // dsh started by this test would show its keys in the moment before it hides them.
      let chain: Promise<unknown> = Promise.resolve();
      const outputs = await Promise.all(
        modes.map((m, i) => {
          const next = chain.then(async () => {
            const provider = providers[i]!;
            const home = tempDir();
            const cfg = cfgs[i]!;
            const run = spawnDsh(['run', '--cwd', gitRepo(), '--sandbox', m.mode, '--approval', 'never', '--config', cfg, 'probe'], {
              env: { ...agentEnv(provider.url, home), ...s.env, DEEPSEEK_BASE_URL: provider.url },
            });
            await run.done;
            const results = logEvents(storedLogs(home)[0]!).filter((e) => e.type === 'tool/result');
            const meta = (results[0]?.data as { meta?: { stdoutSpill?: string } } | undefined)?.meta;
            const full = meta?.stdoutSpill && existsSync(meta.stdoutSpill) ? readFileSync(meta.stdoutSpill, 'utf8') : '';
            return {
              m,
              text: `${JSON.stringify(results.map((r) => r.data))}\n${full}`,
              readResult: JSON.stringify(results[1]?.data ?? null),
              stderr: run.transcript.stderr,
            };
          });
          chain = next.catch(() => undefined);
          return next;
        }),
      );
      for (const o of outputs) {
        const label = `${o.m.mode}${o.m.bubblewrap ? '' : ' without bubblewrap'}`;
        expect(o.text, `${label}\n${o.stderr}`).toContain('== done');
        expect(o.text, label).toContain('PATH=');
        expect(o.text, label).toContain('== cfg');
        expect(o.readResult, label).toMatch(/FS_SANDBOX_DENIED|FS_OUTSIDE_WORKSPACE/);
        for (const v of s.values) expect(o.text.includes(v), `${label}: ${v.split('-')[0]} is visible`).toBe(false);
      }
    } finally {
      rmSync(cfgDir, { recursive: true, force: true });
      await Promise.all(providers.map((p) => p.close()));
    }
  });
});

/**
 * Descriptors: dsh passes its children whatever its own parent left open without close-on-exec
 * (here a file of keys on fd 40, as `dsh run 40<keys.env` or a wrapper script would give it; Node
 * itself happens to reuse the lowest numbers at start-up, so they do not show the leak), and
 * neither Node's spawn nor bubblewrap closes them. Every command must start with only stdin,
 * stdout and stderr.
 */
describe('no inherited descriptor within a tool’s reach', () => {
  it(`a key file dsh inherited on fd 40 is closed before every command (${modeNames})`, {
    timeout: 240_000,
  }, async () => {
    const key = secret('sk-fd');
    const dir = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'dsh-keys-fd-'));
    const keyFile = join(dir, 'keys.env');
    writeFileSync(keyFile, `DEEPSEEK_API_KEY=${key}\n`);
    const probe = 'echo "== fd"; cat <&40 2>&1; cat /proc/self/fd/40 2>&1; ls /proc/self/fd; echo "== done"';
    try {
      const outputs = await Promise.all(
        modes.map(async (m, i) => {
          const provider = await startFakeProvider({
            script: (_req, n) =>
              n === 0
                ? { sse: chatStream({ toolCalls: [{ id: 'call_fd', name: 'bash', args: [JSON.stringify({ command: probe })] }] }) }
                : { sse: chatStream({ text: ['done'] }) },
          });
          const home = tempDir();
          const cfg = join(dir, `config-${i}.json`);
          writeFileSync(cfg, JSON.stringify(m.bubblewrap ? {} : { sandbox: { bubblewrap: false } }));
          const env: Record<string, string | undefined> = {
            ...process.env,
            NO_COLOR: '1',
            DSH_DEBUG: undefined,
            DSH_MODEL: undefined,
            ...agentEnv(provider.url, home),
            DEEPSEEK_BASE_URL: provider.url,
          };
          for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
          // A shell redirection opens it without close-on-exec, then becomes dsh.
          const child = spawn(
            'bash',
            [
              '-c',
              'exec 40<"$0"; exec "$@"',
              keyFile,
              process.execPath,
              builtBin(),
              'run',
              '--cwd',
              gitRepo(),
              '--sandbox',
              m.mode,
              '--approval',
              'never',
              '--config',
              cfg,
              'probe',
            ],
            { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let stderr = '';
          child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
          child.stdout!.resume();
          await new Promise((r) => child.on('close', r));
          await provider.close();
          const results = logEvents(storedLogs(home)[0]!).filter((e) => e.type === 'tool/result');
          return { m, stderr, text: JSON.stringify(results.map((r) => r.data)) };
        }),
      );
      for (const o of outputs) {
        const label = `${o.m.mode}${o.m.bubblewrap ? '' : ' without bubblewrap'}`;
        expect(o.text, `${label}\n${o.stderr}`).toContain('== done');
        expect(o.text.includes(key), `${label}: the key file on fd 40 was readable`).toBe(false);
        expect(o.text, label).toMatch(/Bad file descriptor|No such file or directory/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('every configured secret redacted where errors are printed and logged', () => {
  it('a gateway echoing every request header and its URL: stderr, --json and the log hold [REDACTED], never a secret', {
    // never the key, the header value or the URL token
    timeout: 60_000,
  }, async () => {
    const key = secret('sk-gw');
    const header = secret('hdr');
    const token = secret('urltok');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.headers['x-attempt'] ? 400 : 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `echo: ${req.method} ${req.url} ${JSON.stringify(req.headers)}`, type: 'echo' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const home = tempDir();
      const cfg = join(tempDir(), 'config.json');
      writeFileSync(
        cfg,
        JSON.stringify({
          providers: {
            gw: { baseUrl: `http://127.0.0.1:${port}/v1?token=${token}`, apiKey: key, headers: { 'X-Gateway-Secret': header } },
          },
        }),
      );
      const run = spawnDsh(['run', '--cwd', gitRepo(), '--model', 'gw:echo-model', '--config', cfg, '--json', 'hello'], {
        env: agentEnv('http://127.0.0.1:9', home),
      });
      await run.done;
      const log = readFileSync(storedLogs(home)[0]!, 'utf8');
      const { stdout, stderr } = run.transcript;
      // The gateway's echo did arrive, redacted: in the retry, the chunk failure and turn/end.
      for (const [where, text] of [
        ['log', log],
        ['stdout (--json)', stdout],
        ['stderr', stderr],
      ] as const) {
        expect(text, where).toContain('[REDACTED]');
        if (where !== 'stderr') expect(text, where).toContain('x-gateway-secret');
        for (const v of [key, header, token]) expect(text.includes(v), `${where} holds ${v.split('-')[0]}`).toBe(false);
      }
      const types = new Set(logEvents(storedLogs(home)[0]!).map((e) => e.type));
      expect([...types]).toEqual(expect.arrayContaining(['llm/retry', 'assistant/chunk', 'turn/end']));
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

/**
 * When the overwrite of dsh's environment block fails (here: dsh runs under a read-only `/proc`,
 * as a hardened or containerised host may give it), the keys stay readable from
 * `/proc/<dsh>/environ`. dsh must say so and fail safe: commands run only inside bubblewrap's PID
 * namespace, where dsh is not visible, and are refused where bubblewrap cannot run.
 */
describe.skipIf(!bwrap.ok)('when dsh cannot overwrite its own environment block', () => {
  it('says so on stderr, refuses commands without bubblewrap (SANDBOX_KEYS_EXPOSED), and inside bubblewrap they still see no key', {
    timeout: 120_000,
  }, async () => {
    const key = secret('sk-ds');
    const cfgDir = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'dsh-keys-ro-proc-'));
    const probe =
      'echo "== env"; env; echo "== all"; for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ 2>/dev/null; echo; done; echo "== done"';
    try {
      const runs = await Promise.all(
        [true, false].map(async (bubblewrap) => {
          const provider = await startFakeProvider({
            script: (_req, n) =>
              n === 0
                ? { sse: chatStream({ toolCalls: [{ id: 'call_probe', name: 'bash', args: [JSON.stringify({ command: probe })] }] }) }
                : { sse: chatStream({ text: ['done'] }) },
          });
          const home = tempDir();
          const cfg = join(cfgDir, `config-${bubblewrap}.json`);
          writeFileSync(cfg, JSON.stringify(bubblewrap ? {} : { sandbox: { bubblewrap: false } }));
          const env: Record<string, string | undefined> = {
            ...process.env,
            NO_COLOR: '1',
            DSH_DEBUG: undefined,
            DSH_MODEL: undefined,
            ...agentEnv(provider.url, home),
            DEEPSEEK_API_KEY: key,
            PLAIN_COPY: key,
            DEEPSEEK_BASE_URL: provider.url,
          };
          for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
          // dsh itself under a read-only /proc: opening /proc/self/mem for writing fails (EROFS).
          const child = spawn(
            'bwrap',
            [
              '--dev-bind',
              '/',
              '/',
              '--proc',
              '/proc',
              '--remount-ro',
              '/proc',
              '--unshare-pid',
              '--die-with-parent',
              '--',
              process.execPath,
              builtBin(),
              'run',
              '--cwd',
              gitRepo(),
              '--sandbox',
              'workspace-write',
              '--approval',
              'never',
              '--config',
              cfg,
              'probe',
            ],
            { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let stderr = '';
          child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
          child.stdout.resume();
          await new Promise((r) => child.on('close', r));
          await provider.close();
          const results = logEvents(storedLogs(home)[0]!).filter((e) => e.type === 'tool/result');
          return { bubblewrap, stderr, result: JSON.stringify(results.map((r) => r.data)) };
        }),
      );
      for (const r of runs) {
        const label = r.bubblewrap ? 'with bubblewrap' : 'without bubblewrap';
        expect(r.result.includes(key), `${label}: the key came back`).toBe(false);
        expect(r.stderr, label).toMatch(
          new RegExp(
            "dsh's environment still shows DEEPSEEK_API_KEY, PLAIN_COPY to processes of this user " +
              '\\(/proc/self/mem: .*read-only file system',
            'i',
          ),
        );
        if (r.bubblewrap) expect(r.result, label).toContain('== done');
        else {
          expect(r.result, label).toContain('SANDBOX_KEYS_EXPOSED');
          expect(r.result, label).not.toContain('== env');
        }
      }
    } finally {
      rmSync(cfgDir, { recursive: true, force: true });
    }
  });
});
