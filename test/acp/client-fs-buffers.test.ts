/**
 * The editor keeps buffers, and a buffer can come from a link without any swap during the
 * request: the agent's own background job swaps a workspace file for a link to dsh's config
 * between two reads, the editor reloads its clean buffer from disk (through the link), and the
 * job puts the file back. Both pins then see the same, untouched file. dsh's secrets in the
 * editor's text are refused whatever path they came by; and a file found swapped is not asked
 * for again on the same connection, in a new session either (the editor's buffer outlives it).
 */
import { readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hiddenFileSecrets, holdsSecret, secretLookingValues } from '../../src/acp/buffer-secrets.js';
import {
  agentsClosedAfterEach,
  EDITOR_FS,
  harness,
  loggedResults,
  run,
  SECRET,
  sessionLogs,
  textCall,
  toolCall,
  type Agent,
  type ClientApp,
  type Harness,
} from './support.js';

const start = agentsClosedAfterEach();

/** dsh's config with the provider key in it (the file policy hides), as a user's $DSH_HOME holds it. */
function configWithKey(h: Harness): string {
  const config = join(h.home, 'config.json');
  writeFileSync(config, `${JSON.stringify({ providers: { deepseek: { apiKey: SECRET } } }, null, 2)}\n`);
  return config;
}

/** The file at `path` is swapped for a link to `target`, `reload` runs, and the file is put back. */
function throughLink(path: string, target: string, reload: () => void): void {
  renameSync(path, `${path}.keep`);
  symlinkSync(target, path);
  reload();
  unlinkSync(path);
  renameSync(`${path}.keep`, path);
}

/**
 * An editor that keeps what it read as the buffer of a path, and reloads a clean buffer when the
 * file changes on disk. `between` plays the agent's background job when `trigger` is asked for.
 */
function reloadingEditor(trigger: string, between: (reload: (p: string) => void) => void, seen: string[]) {
  const buffers = new Map<string, string>();
  const reload = (p: string): void => void buffers.set(p, readFileSync(p, 'utf8'));
  return (app: ClientApp): ClientApp =>
    app.onRequest('fs/read_text_file', ({ params }) => {
      seen.push(params.path);
      if (params.path === trigger) between(reload);
      if (!buffers.has(params.path)) reload(params.path);
      return { content: buffers.get(params.path)! };
    });
}

/** Every session log, the updates and stderr: none may hold the secret. */
async function expectNoSecret(agent: Agent, h: Harness): Promise<string[]> {
  const logs = await sessionLogs(agent, h.home);
  for (const log of logs) expect(log).not.toContain(SECRET);
  expect(JSON.stringify(agent.updates)).not.toContain(SECRET);
  expect(agent.stderr()).not.toContain(SECRET);
  return logs;
}

/**
 * x.txt and other.txt in a workspace whose dsh config holds the key; the model reads x.txt, then
 * other.txt, then runs `then`. While it reads other.txt, the job swaps x.txt for a link to the
 * config, the editor reloads x.txt's clean buffer through it, and the job puts x.txt back.
 */
async function afterReloadThroughLink(then: unknown[]) {
  const h = harness();
  const config = configWithKey(h);
  const ws = (p: string) => join(h.workspace, p);
  writeFileSync(ws('x.txt'), 'plain x\n');
  writeFileSync(ws('other.txt'), 'plain other\n');
  const seen: string[] = [];
  const handlers = reloadingEditor(ws('other.txt'), (reload) => throughLink(ws('x.txt'), config, () => reload(ws('x.txt'))), seen);
  const script = [
    toolCall('x1', 'read', { file_path: 'x.txt' }),
    toolCall('o', 'read', { file_path: 'other.txt' }),
    ...then,
    textCall('done'),
  ];
  const agent = start(h, script, { handlers });
  await run(agent, h, EDITOR_FS);
  const [log] = await expectNoSecret(agent, h);
  return { h, config, ws, seen, got: loggedResults(log!) };
}

describe('dsh acp: an editor buffer loaded through a link some other time', { timeout: 90_000 }, () => {
  it('refuses the buffer the editor reloaded through a link between two reads (FS_SECRET_IN_BUFFER), then reads the disk', async () => {
    const { ws, seen, got } = await afterReloadThroughLink([
      toolCall('x2', 'read', { file_path: 'x.txt' }),
      toolCall('x3', 'read', { file_path: 'x.txt' }),
    ]);
    expect(got.get('x1')!.content).toContain('plain x');
    const x2 = got.get('x2')!;
    expect(x2.isError).toBe(true);
    expect(x2.error).toMatchObject({ code: 'FS_SECRET_IN_BUFFER' });
    expect(x2.content).toContain("holds one of dsh's secrets");
    // The third read is the disk's, and the editor was not asked for x.txt again.
    expect(got.get('x3')!.isError).toBe(false);
    expect(got.get('x3')!.content).toContain('plain x');
    expect(seen).toEqual([ws('x.txt'), ws('other.txt'), ws('x.txt')]);
  });

  it('an edit of such a buffer writes nothing: the key never lands in a workspace file', async () => {
    const { config, ws, got } = await afterReloadThroughLink([
      toolCall('x2', 'edit', { file_path: 'x.txt', old_string: '"apiKey"', new_string: '"k"' }),
    ]);
    expect(readFileSync(ws('x.txt'), 'utf8')).toBe('plain x\n');
    expect(readFileSync(config, 'utf8')).toContain(SECRET);
    expect(got.get('x2')!.error).toMatchObject({ code: 'FS_SECRET_IN_BUFFER' });
  });

  it('a file found swapped is read from the disk in a new session on the same connection too', async () => {
    const h = harness();
    // Not one of dsh's secrets: only the distrust of the swapped file keeps it out.
    const outside = join(h.dir, 'outside.txt');
    writeFileSync(outside, 'OUTSIDE TEXT\n');
    const ws = (p: string) => join(h.workspace, p);
    writeFileSync(ws('b.txt'), 'plain b\n');
    const seen: string[] = [];
    let first = true;
    // The first request for b.txt is answered through a swap that is put back (detected), and the
    // editor keeps what it read as b.txt's buffer.
    const handlers = reloadingEditor(
      ws('b.txt'),
      (reload) => {
        if (first) throughLink(ws('b.txt'), outside, () => reload(ws('b.txt')));
        first = false;
      },
      seen,
    );
    const script = [
      toolCall('s1', 'read', { file_path: 'b.txt' }),
      textCall('one'),
      toolCall('s2', 'read', { file_path: 'b.txt' }),
      textCall('two'),
    ];
    const agent = start(h, script, { handlers });
    const sid1 = await run(agent, h, EDITOR_FS);
    const { sessionId: sid2 } = await agent.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
    const r2 = await agent.conn.agent.request('session/prompt', { sessionId: sid2, prompt: [{ type: 'text', text: 'go' }] });
    expect(r2.stopReason).toBe('end_turn');

    const logs = await sessionLogs(agent, h.home);
    expect(logs).toHaveLength(2);
    for (const log of logs) expect(log).not.toContain('OUTSIDE TEXT');
    expect(JSON.stringify(agent.updates)).not.toContain('OUTSIDE TEXT');
    const bySession = new Map(logs.map((l) => [(JSON.parse(l.split('\n')[0]!) as { id: string }).id, loggedResults(l)]));
    expect(bySession.get(sid1)!.get('s1')!.error).toMatchObject({ code: 'FS_PATH_CHANGED' });
    const s2 = bySession.get(sid2)!.get('s2')!;
    expect(s2.isError).toBe(false);
    expect(s2.content).toContain('plain b');
    expect(seen).toEqual([ws('b.txt')]);
  });
});

describe("dsh's secrets in an editor's text", () => {
  it('takes the values under secret-looking names at any depth, and only those', () => {
    const doc = {
      model: 'deepseek:deepseek-chat',
      providers: { deepseek: { apiKey: 'sk-one-1234', baseUrl: 'https://api.example.com' } },
      mcpServers: { gh: { command: 'gh-mcp', env: { GITHUB_TOKEN: 'ghp_two_5678', LOG_DIR: '/var/log/x' } } },
      headers: { Authorization: ['Bearer three-9012'] },
      notes: { password: { nested: 'four-3456' } },
    };
    expect(secretLookingValues(doc).sort()).toEqual(['Bearer three-9012', 'four-3456', 'ghp_two_5678', 'sk-one-1234']);
  });

  it('reads the hidden files (JSON ones; others give none) and finds a value inside a longer text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-buffer-secrets-'));
    const a = join(dir, 'config.json');
    const b = join(dir, 'broken.json');
    writeFileSync(
      a,
      JSON.stringify({ providers: { x: { apiKey: 'sk-hidden-value-1' } }, mcpServers: { s: { env: { API_TOKEN: 'short' } } } }),
    );
    writeFileSync(b, '{ not json');
    const found = await hiddenFileSecrets([a, b, join(dir, 'missing.json')]);
    // 'short' is below a secret's length: it would refuse every text holding the word.
    expect(found).toEqual(['sk-hidden-value-1']);
    expect(holdsSecret('1: {"apiKey": "sk-hidden-value-1"}', found)).toBe(true);
    expect(holdsSecret('sk-hidden-value-', found)).toBe(false);
    expect(holdsSecret('a short word', ['short'])).toBe(false);
  });

  it('finds a key the config file spells with JSON escapes (the editor shows the file as written)', () => {
    const key = 'sk-hidden/value-1';
    const file = JSON.stringify({ apiKey: key }).replace('sk-', '\\u0073\\u006b-').replace('/', '\\/');
    expect(file).toBe('{"apiKey":"\\u0073\\u006b-hidden\\/value-1"}');
    expect(JSON.parse(file)).toEqual({ apiKey: key });
    expect(holdsSecret(file, [key])).toBe(true);
    expect(holdsSecret('{"apiKey":"\\u0073\\u006b-hidden\\/value-"}', [key])).toBe(false);
  });
});
