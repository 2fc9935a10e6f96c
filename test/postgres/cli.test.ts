/**
 * The CLI on the PostgreSQL store (DSH_STORE): `dsh run` writes there, `dsh sessions`, `dsh log`
 * and `--continue` read it; `dsh sessions export|import` move sessions between the JSONL store and
 * PostgreSQL with every event byte for byte, including the real dsh logs in ../shared.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, stringifyJson } from '../../src/session/index.js';
import { PgStore } from '../../src/postgres/index.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { hasShared, sharedPath } from '../support/shared.js';
import { agentEnv, gitRepo, storedLogs, tempDir, text, typoFixScript } from '../cli/support/agent.js';
import { runMain } from '../cli/support/inproc.js';
import { describePg, freshSchema, pgUrl } from './support/pg.js';
import { Output } from '../../src/cli/output.js';
import { runShowFollow } from '../../src/cli/log/follow.js';
import { appendTurn, fixedClock } from '../store/support/events.js';
import { printedSeqs } from '../cli/support/timeline.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

/** The fixtures are tokenised: give each placeholder a concrete value of the kind it stands for. */
function fillPlaceholders(text: string): string {
  return text
    .replaceAll('"{{tools}}"', '[]')
    .replaceAll('{{system}}', 'You are a test.')
    .replaceAll('{{cwd}}', '/tmp/real-workspace')
    .replaceAll('{{sessionId}}', 'real-session');
}

describePg('the CLI on PostgreSQL (DSH_STORE)', () => {
  it('dsh run stores there; sessions list, log show/check and --continue read it', async () => {
    const schema = freshSchema();
    const repo = gitRepo();
    const home = tempDir();
    provider = await startFakeProvider({ script: [...typoFixScript(), text(['Done again.'])] });
    const env = agentEnv(provider.url, home, { DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema });
    const r = await runMain(['run', '--cwd', repo, 'Fix the typo in README.md'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(storedLogs(home)).toEqual([]); // nothing on disk
    expect(r.stderr).toMatch(/· log postgres:[^ ]+\/[0-9a-f-]{36} · turn 1 ·/);

    const list = await runMain(['sessions', 'list', '--cwd', repo, '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { id: string; title: string; turns: number; bytes: unknown; path: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ title: 'Fix the typo in README.md', turns: 1, bytes: null });
    const id = rows[0]!.id;

    const check = await runMain(['log', 'check', id.slice(0, 8)], env);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/postgres:.*: ok · \d+ events in \d+ rows · 1 turn · 4 steps/);
    const show = await runMain(['log', 'show', id], env);
    expect(show.stdout).toContain('tool call edit');

    const again = await runMain(['run', '--cwd', repo, '--continue', 'And again'], env);
    expect(again.code, again.stderr).toBe(0);
    const store = new PgStore({ url: pgUrl!, schema });
    try {
      const view = await store.inspect(id);
      expect(view.session.trace.lastTurn).toBe(2);
      expect(view.warnings).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('export | import moves a session JSONL → PostgreSQL → JSONL with every byte the same', async () => {
    const schema = freshSchema();
    const repo = gitRepo();
    const home = tempDir();
    const home2 = tempDir();
    provider = await startFakeProvider({ script: typoFixScript() });
    const env = agentEnv(provider.url, home);
    expect((await runMain(['run', '--cwd', repo, 'Fix the typo in README.md'], env)).code).toBe(0);
    const [file] = storedLogs(home);
    const id = JSON.parse(readFileSync(file!, 'utf8').split('\n')[0]!).id as string;

    const exported = await runMain(['sessions', 'export', id], env);
    expect(exported.code, exported.stderr).toBe(0);
    // The store's file is the canonical encoding already: the export is that file.
    expect(exported.stdout).toBe(readFileSync(file!, 'utf8'));

    const dump = join(tempDir(), 'moved.jsonl');
    writeFileSync(dump, exported.stdout);
    const pgEnv = { ...env, DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema };
    const imp = await runMain(['sessions', 'import', dump], pgEnv);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toMatch(new RegExp(`imported session ${id} \\(\\d+ events\\) as postgres:`));
    const again = await runMain(['sessions', 'import', dump], pgEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('[SESSION_EXISTS]');

    const back = await runMain(['sessions', 'export', id], pgEnv);
    expect(back.stdout).toBe(exported.stdout);
    const into = join(tempDir(), 'back.jsonl');
    writeFileSync(into, back.stdout);
    const home2Env = { ...env, DSH_HOME: home2 };
    expect((await runMain(['sessions', 'import', into], home2Env)).code).toBe(0);
    const [file2] = storedLogs(home2);
    expect(readFileSync(file2!, 'utf8')).toBe(readFileSync(file!, 'utf8'));
  });

  it('import stores canonical lines byte for byte and others in their canonical form (what its help says)', async () => {
    const schema = freshSchema();
    const home = tempDir();
    const env = { DSH_HOME: home, HOME: tempDir() };
    const pgEnv = { ...env, DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema };
    const help = await runMain(['sessions', 'import', '--help'], env);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'lines dsh wrote (canonical JSON) byte for byte; any other line as its canonical form',
    );
    // A canonical log (dsh wrote it), and the same log hand-edited: spaces, an escaped key, CRLF.
    const canonical = encodeJsonl({ version: 0, id: 'canon', createdAt: 1, cwd: '/w' }, [
      {
        type: 'user/message',
        seq: 0,
        time: 2,
        data: { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
        surfaceOp: 'append',
      },
    ] as never);
    const lines = canonical.split('\n');
    const edited = `${lines[0]!.replace('"canon"', '"edited"')}\r\n${lines[1]!.replace('{"type":', '{ "\\u0074ype" :  ')}  \r\n`;
    const dir = tempDir();
    writeFileSync(join(dir, 'canon.jsonl'), canonical);
    writeFileSync(join(dir, 'edited.jsonl'), edited);
    for (const e of [env, pgEnv]) {
      expect((await runMain(['sessions', 'import', join(dir, 'canon.jsonl'), join(dir, 'edited.jsonl')], e)).code).toBe(0);
      expect((await runMain(['sessions', 'export', 'canon'], e)).stdout).toBe(canonical);
      const back = (await runMain(['sessions', 'export', 'edited'], e)).stdout;
      expect(back).not.toBe(edited);
      expect(back).toBe(canonical.replace('"canon"', '"edited"'));
    }
  });

  it('dsh log show --follow prints a session another store writes, each event once', async () => {
    const schema = freshSchema();
    const writer = new PgStore({ url: pgUrl!, schema, clock: fixedClock() });
    try {
      const w = await writer.create({ cwd: '/w', id: 'followed-session' });
      appendTurn(w.session);
      await w.flush();
      let stdout = '';
      let stderr = '';
      const io = {
        out: new Output({ write: (s: string) => (stdout += s) }, false),
        err: new Output({ write: (s: string) => (stderr += s) }, false),
        env: { DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema, DSH_HOME: tempDir() },
      };
      let stop!: () => void;
      const run = runShowFollow('followed', {}, io, new Promise<void>((r) => (stop = r)));
      for (let i = 0; i < 100 && !stdout.includes('turn 1 end'); i++) await sleep(50);
      appendTurn(w.session, { deltas: 9 });
      appendTurn(w.session, { deltas: 4 });
      await w.flush();
      for (let i = 0; i < 100 && !stdout.includes('turn 3 end'); i++) await sleep(50);
      stop();
      expect(await run, stderr).toBe(0);
      expect(stderr).toMatch(/following postgres:.*\/followed-session/);
      const seqs = printedSeqs(stdout);
      expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
      expect(seqs.at(-1)).toBe(w.session.length - 1);
      await w.close();
    } finally {
      await writer.close();
    }
  });

  it.runIf(hasShared)(
    "every real dsh log in ../shared survives the move: each event's text, and the export, identical",
    async () => {
      const schema = freshSchema();
      const store = new PgStore({ url: pgUrl!, schema, poolSize: 4 });
      const dir = sharedPath('fixtures', 'dsh');
      const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
      expect(files.length).toBeGreaterThan(50);
      let moved = 0;
      try {
        for (const f of files) {
          let load;
          try {
            load = loadJsonl(fillPlaceholders(readFileSync(join(dir, f), 'utf8')), { repair: false });
          } catch {
            continue; // the logs the codec itself refuses are not sessions to move
          }
          if (load.tornTail) continue;
          const events = load.session.events.slice(0, load.eventCount);
          const header = { ...load.header, id: `${load.header.id}-${moved}` };
          await store.importLog({ header, events });
          const view = await store.inspect(header.id, { repair: false });
          const back = view.session.events.slice(0, view.eventCount);
          expect(
            back.map((e) => stringifyJson(e)),
            f,
          ).toEqual(events.map((e) => stringifyJson(e)));
          expect(encodeJsonl(view.header, back), f).toBe(encodeJsonl(header, events));
          moved++;
        }
      } finally {
        await store.close();
      }
      expect(moved).toBeGreaterThan(50);
    },
    120_000,
  );
});
