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
  const names = { GH_AUTH: secret('ghauth'), SOME_TOKEN: secret('tok'), DB_PASSWORD: secret('pw'), CLOUD_CREDENTIALS: secret('cred'), SERVICE_KEY: secret('svc'), MY_SECRET_THING: secret('sec') };
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

/** Every environment the tool can see: its own, every readable process's, and `ps e`'s. */
const PROBE = [
  'echo "== env"; env',
  'echo "== parent $PPID"; tr "\\0" "\\n" < /proc/$PPID/environ',
  'echo "== all"; for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ 2>/dev/null; echo; done',
  'echo "== ps"; ps -A e -ww -o pid=,args= 2>&1',
  'echo "== done"',
].join('\n');

describe('no key within a tool’s reach', () => {
  it(`env, /proc/*/environ and ps e show no secret (${modes.map((m) => `${m.mode}${m.bubblewrap ? '' : ' without bubblewrap'}`).join('; ')})`, { timeout: 240_000 }, async () => {
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
          script: (_req, n) => (n === 0 ? { sse: chatStream({ toolCalls: [{ id: 'call_probe', name: 'bash', args: [JSON.stringify({ command: `${PROBE}\necho "== cfg"; ${modes[i]!.bubblewrap ? `cat ${cfgs[i]!}` : ': no bubblewrap, no mount to hide it under'}` })] }, { id: 'call_read', name: 'read', args: [JSON.stringify({ file_path: cfgs[i]! })] }] }) } : { sse: chatStream({ text: ['done'] }) }),
        }),
      ),
    );
    try {
      const outputs = await Promise.all(
        modes.map(async (m, i) => {
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
          return { m, text: `${JSON.stringify(results.map((r) => r.data))}\n${full}`, readResult: JSON.stringify(results[1]?.data ?? null), stderr: run.transcript.stderr };
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

describe('every configured secret redacted where errors are printed and logged', () => {
  it('a gateway echoing every request header and its URL: stderr, --json and the log hold [REDACTED], never the key, the header value or the URL token', { timeout: 60_000 }, async () => {
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
      writeFileSync(cfg, JSON.stringify({ providers: { gw: { baseUrl: `http://127.0.0.1:${port}/v1?token=${token}`, apiKey: key, headers: { 'X-Gateway-Secret': header } } } }));
      const run = spawnDsh(['run', '--cwd', gitRepo(), '--model', 'gw:echo-model', '--config', cfg, '--json', 'hello'], { env: agentEnv('http://127.0.0.1:9', home) });
      await run.done;
      const log = readFileSync(storedLogs(home)[0]!, 'utf8');
      const { stdout, stderr } = run.transcript;
      // The gateway's echo did arrive, redacted: in the retry, the chunk failure and turn/end.
      for (const [where, text] of [['log', log], ['stdout (--json)', stdout], ['stderr', stderr]] as const) {
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
