/** `dsh view` and `dsh log export`: thin CLI wrappers over the viewer and the OTel exporter. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runView } from '../../src/cli/view.js';
import { Output } from '../../src/cli/output.js';
import { runMain } from './support/inproc.js';
import { startReceiver } from '../observability/support/receiver.js';
import { repoRoot } from '../support/shared.js';

const example = `${repoRoot}/examples/fix-typo.jsonl`;

function capture(): { io: { out: Output; err: Output; env: NodeJS.ProcessEnv }; out: () => string } {
  let stdout = '';
  const out = new Output({ write: (s: string) => (stdout += s) }, false);
  const err = new Output({ write: () => true }, false);
  return { io: { out, err, env: {} }, out: () => stdout };
}

describe('dsh view', () => {
  it('prints a tokenised 127.0.0.1 address that serves the page, and stops when told', async () => {
    const { io, out } = capture();
    let stop!: () => void;
    const until = new Promise<void>((r) => (stop = r));
    const done = runView(example, {}, io, until);
    for (let i = 0; i < 200 && !out().includes('http'); i++) await new Promise((r) => setTimeout(r, 10));
    const url = out().trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{16,}\/$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    // Without the token, nothing.
    const bare = await fetch(new URL('/', url));
    expect(bare.status).toBe(404);
    stop();
    expect(await done).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('dsh log export', () => {
  it('sends one trace per turn to the endpoint, with the headers given, and reports the counts', async () => {
    const receiver = await startReceiver();
    try {
      const r = await runMain(['log', 'export', '--otlp', receiver.url, '-H', 'authorization=Bearer t0ken', '--json', example]);
      expect(r.code).toBe(0);
      const summary = JSON.parse(r.stdout) as { turns: number; spans: number };
      // Independent count from the log: turns, model attempts (finish chunks), tool calls.
      const lines = readFileSync(example, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l) as { type: string; data: { chunk?: { type: string } } });
      const turns = lines.filter((e) => e.type === 'turn/start').length;
      const attempts = lines.filter((e) => e.type === 'assistant/chunk' && e.data.chunk?.type === 'finish').length;
      const calls = lines.filter((e) => e.type === 'tool/call').length;
      expect(summary.turns).toBe(turns);
      expect(summary.spans).toBe(turns + attempts + calls);
      const spans = receiver.spans();
      expect(spans).toHaveLength(summary.spans);
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(turns);
      expect(receiver.requests.every((q) => q.headers.authorization === 'Bearer t0ken')).toBe(true);
      // Content stays out by default.
      expect(JSON.stringify(spans)).not.toContain('Fix the typo in README.md');
    } finally {
      await receiver.close();
    }
  });

  it('--traces session: one trace, a session span over the turns; resource attributes and config endpoints as given', async () => {
    const receiver = await startReceiver();
    const home = mkdtempSync(join(tmpdir(), 'dsh-export-'));
    try {
      writeFileSync(join(home, 'config.json'), JSON.stringify({ providers: { deepseek: { baseUrl: 'http://127.0.0.1:7001/v1' } } }));
      const r = await runMain(
        [
          'log',
          'export',
          '--otlp',
          receiver.url,
          '--traces',
          'session',
          '--resource-attribute',
          'deployment.environment=ci',
          '--json',
          example,
        ],
        { DSH_HOME: home },
      );
      expect(r.code).toBe(0);
      const turns = readFileSync(example, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"turn/start"')).length;
      expect(JSON.parse(r.stdout)).toMatchObject({ turns, traces: 1 });
      const spans = receiver.spans();
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
      const root = spans.find((s) => s.name === 'session dsh')!;
      expect(spans.filter((s) => s.name.startsWith('invoke_agent')).every((s) => s.parentSpanId === root.spanId)).toBe(true);
      expect(spans[0]!.resource).toMatchObject({ 'service.name': 'dsh', 'deployment.environment': 'ci' });
      // The example's route is deepseek: its endpoint is the one the config gives.
      const chats = spans.filter((s) => s.name.startsWith('chat '));
      expect(chats.length).toBeGreaterThan(0);
      for (const c of chats) expect([c.attributes['server.address'], c.attributes['server.port']]).toEqual(['127.0.0.1', 7001]);
    } finally {
      await receiver.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('--traces other than turn or session, and a bad --resource-attribute, are usage errors', async () => {
    for (const flags of [
      ['--traces', 'day'],
      ['--resource-attribute', 'novalue'],
    ]) {
      const r = await runMain(['log', 'export', '--otlp', 'http://127.0.0.1:9/v1/traces', ...flags, example]);
      expect(r.code).toBe(2);
    }
  });

  it('a bad --header is a usage error', async () => {
    const r = await runMain(['log', 'export', '--otlp', 'http://127.0.0.1:9/v1/traces', '-H', 'nonsense', example]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NAME=VALUE');
  });
});
