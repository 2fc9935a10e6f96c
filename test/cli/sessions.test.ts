/**
 * `dsh sessions list|path`, and `dsh log …` naming a stored session by id. Sessions are made
 * through the store's own API with a fixed clock, so times, ids and turn counts are known.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { main } from '../../src/cli/main.js';
import { Output } from '../../src/cli/output.js';
import { runMain } from './support/inproc.js';
import { examplePath } from './support/files.js';
import { tempDir } from './support/agent.js';

// The version dsh reports, replaceable by a test (another release installed over this one).
const release = vi.hoisted(() => ({ version: undefined as string | undefined }));
vi.mock('../../src/cli/version.js', async (real: () => Promise<typeof import('../../src/cli/version.js')>) => {
  const actual = await real();
  return { packageVersion: () => release.version ?? actual.packageVersion() };
});

interface Made {
  id: string;
  path: string;
}

async function makeSession(root: string, cwd: string, id: string, createdAt: number, prompts: string[]): Promise<Made> {
  let now = createdAt;
  const store = new SessionStore({ root, clock: () => now++ });
  const stored = await store.create({ cwd, id });
  const s = stored.session;
  prompts.forEach((text, i) => {
    const turn = i + 1;
    s.append('turn/start', { turn });
    s.append('step/start', { turn, step: 1 });
    s.append(
      'user/message',
      { id: `m${turn}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    s.append('step/end', { turn, step: 1 });
    s.append('turn/end', { turn, reason: { kind: 'completed' } });
  });
  const path = stored.path;
  await store.close();
  return { id, path };
}

const T1 = Date.UTC(2026, 0, 2, 3, 4, 5);
const T2 = Date.UTC(2026, 0, 3, 10, 20, 30);
const T3 = Date.UTC(2026, 0, 4, 0, 0, 0);

async function fixture(): Promise<{ home: string; a: string; b: string; older: Made; newer: Made; other: Made }> {
  const home = tempDir();
  const root = join(home, 'sessions');
  const a = tempDir();
  const b = tempDir();
  const older = await makeSession(root, a, 'aaaa1111-0000-4000-8000-000000000001', T1, ['Fix the typo\nin README.md', 'and the other one']);
  const newer = await makeSession(root, a, 'aaaa2222-0000-4000-8000-000000000002', T2, ['Add a test']);
  const other = await makeSession(root, b, 'bbbb3333-0000-4000-8000-000000000003', T3, []);
  return { home, a, b, older, newer, other };
}

describe('dsh sessions', () => {
  it("list shows the workspace's sessions, newest first: id, created, turns, title, path", async () => {
    const f = await fixture();
    const r = await runMain(['sessions', 'list', '--cwd', f.a], { DSH_HOME: f.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      `${f.newer.id}  2026-01-03 10:20Z · 1 turn  "Add a test"`,
      `  ${f.newer.path}`,
      `${f.older.id}  2026-01-02 03:04Z · 2 turns  "Fix the typo in README.md"`,
      `  ${f.older.path}`,
      '',
    ]);
    // `sessions` alone is `sessions list`.
    const bare = await runMain(['sessions', '--cwd', f.a], { DSH_HOME: f.home });
    expect(bare.stdout).toBe(r.stdout);
  });

  it('--all lists every workspace (with its directory); --json gives the fields', async () => {
    const f = await fixture();
    const all = await runMain(['sessions', 'list', '--all'], { DSH_HOME: f.home });
    expect(all.stdout.split('\n').filter((l) => !l.startsWith(' '))).toEqual([
      `${f.other.id}  2026-01-04 00:00Z · 0 turns · ${f.b}`,
      `${f.newer.id}  2026-01-03 10:20Z · 1 turn · ${f.a}  "Add a test"`,
      `${f.older.id}  2026-01-02 03:04Z · 2 turns · ${f.a}  "Fix the typo in README.md"`,
      '',
    ]);
    const json = await runMain(['sessions', 'list', '--all', '--json', '--limit', '2'], { DSH_HOME: f.home });
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        id: f.other.id,
        cwd: f.b,
        createdAt: T3,
        turns: 0,
        title: null,
        prompt: null,
        path: f.other.path,
        parentSession: null,
        lockedByPid: null,
      }),
      expect.objectContaining({
        id: f.newer.id,
        cwd: f.a,
        createdAt: T2,
        turns: 1,
        title: 'Add a test',
        prompt: 'Add a test',
        path: f.newer.path,
      }),
    ]);
  });

  it('reads a bounded window at each end of a big log: the turn count from the tail, no title guessed from a cut line', async () => {
    const home = tempDir();
    const cwd = tempDir();
    const big = await makeSession(join(home, 'sessions'), cwd, 'dddd4444-0000-4000-8000-000000000004', T1, [
      'x'.repeat(200_000),
      'second',
      'third',
    ]);
    const r = await runMain(['sessions', 'list', '--json', '--cwd', cwd], { DSH_HOME: home });
    expect(JSON.parse(r.stdout)).toEqual([expect.objectContaining({ id: big.id, turns: 3, title: null })]);
  });

  it('an empty workspace says so on stderr and exits 0', async () => {
    const f = await fixture();
    const empty = tempDir();
    const r = await runMain(['sessions', 'list', '--cwd', empty], { DSH_HOME: f.home });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`no sessions for ${empty} under ${join(f.home, 'sessions')} (--all lists every workspace)\n`);
  });

  it('a bad DSH_STORE_SCHEMA is named before a bad --cwd, as a bad DSH_STORE is (the store is chosen first)', async () => {
    const missing = join(tempDir(), 'gone');
    // Port 1: nothing is reached; the schema is refused before any connection.
    const pg = { DSH_HOME: tempDir(), DSH_STORE: 'postgres://nobody@127.0.0.1:1/x' };
    for (const schema of ['Bad-Name', '1st', 'a'.repeat(49)]) {
      const r = await runMain(['sessions', '--cwd', missing], { ...pg, DSH_STORE_SCHEMA: schema });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`PostgreSQL schema name ${JSON.stringify(schema)} is not allowed`);
      expect(r.stderr).toMatch(/\[INVALID_ARGUMENT\]\n$/);
      expect(r.stderr).not.toContain(missing);
    }
    // The JSONL store has no schema: DSH_STORE_SCHEMA is not looked at, and --cwd is.
    const jsonl = await runMain(['sessions', '--cwd', missing], { DSH_HOME: tempDir(), DSH_STORE_SCHEMA: 'Bad-Name' });
    expect(jsonl.code).toBe(1);
    expect(jsonl.stderr).toMatch(/^dsh: .*gone: no such directory \[NOT_A_DIRECTORY\]\n$/);
  });

  it('path prints the log of an id or a unique prefix; ambiguous and unknown ids fail with one line', async () => {
    const f = await fixture();
    const env = { DSH_HOME: f.home };
    expect((await runMain(['sessions', 'path', f.older.id], env)).stdout).toBe(`${f.older.path}\n`);
    expect((await runMain(['sessions', 'path', 'bbbb'], env)).stdout).toBe(`${f.other.path}\n`);
    const ambiguous = await runMain(['sessions', 'path', 'aaaa'], env);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toBe(
      `dsh: 2 sessions start with "aaaa" (${f.newer.id}, ${f.older.id}); give more of the id [AMBIGUOUS_SESSION]\n`,
    );
    const unknown = await runMain(['sessions', 'path', 'cccc'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      `dsh: no session "cccc" under ${join(f.home, 'sessions')}; dsh sessions list shows them [SESSION_NOT_FOUND]\n`,
    );
    const short = await runMain(['sessions', 'path', 'aa'], env);
    expect(short.stderr).toContain('(a prefix needs at least 4 characters)');
  });

  it('dsh log show/check/messages accept a session id; an existing file of that name wins', async () => {
    const f = await fixture();
    const env = { DSH_HOME: f.home };
    const show = await runMain(['log', 'show', 'aaaa1111'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout.split('\n')[0]).toBe(`session ${f.older.id} · created 2026-01-02T03:04:05.000Z · cwd ${f.a}`);
    const check = await runMain(['log', 'check', f.newer.id, 'bbbb3333'], env);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(`${f.newer.path}: ok · `);
    expect(check.stdout).toContain(`${f.other.path}: ok · `);
    const messages = await runMain(['log', 'messages', '--brief', 'aaaa2222'], env);
    expect(messages.stdout).toContain('text "Add a test"');

    // A file named like the prefix, in the current directory, is read instead of the session.
    const dir = tempDir();
    copyFileSync(examplePath, join(dir, 'aaaa1111'));
    const was = process.cwd();
    process.chdir(dir);
    try {
      const byFile = await runMain(['log', 'check', 'aaaa1111'], env);
      expect(byFile.stdout).toMatch(/^aaaa1111: ok · \d+ events in \d+ rows · 2 turns · 6 steps/);
    } finally {
      process.chdir(was);
    }
    const missing = await runMain(['log', 'show', 'cccc4444'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('dsh: cccc4444: no such file [FILE_NOT_FOUND]\n');
  });

  it('log check with several arguments: one that names no single session fails as that file, the others are checked', async () => {
    const f = await fixture();
    const r = await runMain(['log', 'check', examplePath, 'aaaa', 'bbbb3333', join(tempDir(), 'none.jsonl')], { DSH_HOME: f.home });
    expect(r.code).toBe(1);
    const out = r.stdout.split('\n');
    expect(out).toContain(
      `aaaa: error AMBIGUOUS_SESSION: 2 sessions start with "aaaa" (${f.newer.id}, ${f.older.id}); give more of the id`,
    );
    expect(out).toContain('aaaa: FAILED');
    expect(r.stdout).toContain(`${examplePath}: ok · `);
    expect(r.stdout).toContain(`${f.other.path}: ok · `);
    expect(out).toContain('4 files: 2 ok, 2 failed');
    const json = JSON.parse((await runMain(['log', 'check', '--json', 'aaaa', 'bbbb3333'], { DSH_HOME: f.home })).stdout) as {
      files: { file: string; ok: boolean; problems: { code: string }[] }[];
    };
    expect(json.files.map((x) => [x.file, x.ok, x.problems.map((p) => p.code)])).toEqual([
      ['aaaa', false, ['AMBIGUOUS_SESSION']],
      [f.other.path, true, []],
    ]);
  });

  it('a compressed session is named as such when asked for by id, and listed as a warning once per problem, path said once', async () => {
    const f = await fixture();
    const dir = join(f.home, 'sessions', basename(dirname(dirname(f.other.path))), 'cccc5555-0000-4000-8000-000000000005');
    mkdirSync(dir);
    writeFileSync(join(dir, 'session.jsonl.zstd'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
    const broken = join(f.home, 'sessions', basename(dirname(dirname(f.other.path))), 'dddd6666-0000-4000-8000-000000000006');
    mkdirSync(broken);
    writeFileSync(join(broken, 'session.jsonl'), '{"type":"sess');
    const env = { DSH_HOME: f.home };
    for (const ref of ['cccc5555', 'cccc5555-0000-4000-8000-000000000005']) {
      const r = await runMain(['log', 'show', ref], env);
      expect(r.code, ref).toBe(1);
      expect(r.stderr).toMatch(/session\.jsonl\.zstd is a zstd-compressed dsh log; .* \[COMPRESSED_LOG\]\n$/);
    }
    const list = await runMain(['sessions', '--all'], env);
    const warnings = list.stderr.split('\n').filter(Boolean);
    expect(warnings).toHaveLength(2);
    expect(warnings).toContain(
      `warning: ${join(dir, 'session.jsonl.zstd')} is a zstd-compressed dsh log; this build reads and writes only uncompressed ` +
        'logs (session.jsonl). Decompress it to session.jsonl beside it (zstd -d), or use a separate root [COMPRESSED_LOG]',
    );
    expect(warnings).toContain(`warning: ${join(broken, 'session.jsonl')}: no complete header line [BAD_HEADER]`);
  });
});

describe('dsh sessions --rescan (issue 13 item 3)', () => {
  it('the listing index trusts what the store did not announce; --rescan reads every log and rebuilds it', async () => {
    const f = await fixture();
    const turnsOf = async (args: string[]): Promise<Record<string, number | null>> => {
      const r = await runMain(['sessions', 'list', '--all', '--json', ...args], { DSH_HOME: f.home });
      expect(r.code, r.stderr).toBe(0);
      return Object.fromEntries((JSON.parse(r.stdout) as { id: string; turns: number | null }[]).map((s) => [s.id, s.turns]));
    };
    const before = { [f.older.id]: 2, [f.newer.id]: 1, [f.other.id]: 0 };
    expect(await turnsOf([])).toEqual(before);
    // A third turn appended by hand (not through the store): the fast path does not see it.
    appendFileSync(f.older.path, `${JSON.stringify({ type: 'turn/start', seq: 10, time: T1 + 10, data: { turn: 3 } })}\n`);
    expect(await turnsOf([])).toEqual(before);
    expect(await turnsOf(['--rescan'])).toEqual({ ...before, [f.older.id]: 3 });
    expect(await turnsOf([])).toEqual({ ...before, [f.older.id]: 3 });
  });
});

describe('dsh sessions: the text kept under the listing generation (issue 13 item 3)', () => {
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  /** The fixture, where `dsh sessions --all` keeps its text, and that listing (exit 0 asserted). */
  async function allListing() {
    const f = await fixture();
    const all = async (): Promise<string> => {
      const r = await runMain(['sessions', '--all'], { DSH_HOME: f.home });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    return { f, kept: join(f.home, 'cache', 'sessions-all.txt'), all };
  }

  it('an unchanged store prints the kept text; a change, another scope, limit or style is listed afresh', async () => {
    const f = await fixture();
    const env = { DSH_HOME: f.home };
    const kept = join(f.home, 'cache', 'sessions-all.txt');
    const all = async (...more: string[]): Promise<string> => {
      const r = await runMain(['sessions', '--all', ...more], env);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const truth = await all();
    expect(truth.split('\n').filter((l) => !l.startsWith(' '))).toEqual([
      `${f.other.id}  2026-01-04 00:00Z · 0 turns · ${f.b}`,
      `${f.newer.id}  2026-01-03 10:20Z · 1 turn · ${f.a}  "Add a test"`,
      `${f.older.id}  2026-01-02 03:04Z · 2 turns · ${f.a}  "Fix the typo in README.md"`,
      '',
    ]);
    await sleep(2100); // past the window in which a project directory's mtime may not move
    for (let i = 0; i < 3 && !existsSync(kept); i++) expect(await all()).toBe(truth);
    expect(existsSync(kept), 'a settled listing keeps its text').toBe(true);
    // Proof that the kept text is what is printed: a same-length edit of it shows.
    const original = readFileSync(kept);
    writeFileSync(kept, Buffer.from(original.toString('latin1').replace('Add a test', 'Add a TEST'), 'latin1'));
    expect(await all()).toBe(truth.replace('Add a test', 'Add a TEST'));
    // Its length changed (cut, grown): not used, listed afresh and kept again.
    writeFileSync(kept, original.subarray(0, original.length - 1));
    expect(await all()).toBe(truth);
    expect(readFileSync(kept)).toEqual(original);
    // A FIFO at its name: a miss, not a wait (and the text kept replaces it, by rename).
    rmSync(kept);
    expect(spawnSync('mkfifo', [kept]).status).toBe(0);
    expect(await all()).toBe(truth);
    expect(lstatSync(kept).isFile()).toBe(true);
    expect(readFileSync(kept)).toEqual(original);
    // Another limit, the workspace scope, a colouring output: each listed afresh, right.
    expect(await all('--limit', '1')).toBe(truth.split('\n').slice(0, 2).join('\n') + '\n');
    expect(await all()).toBe(truth);
    const ws = await runMain(['sessions', '--cwd', f.a], env);
    expect(ws.stdout.split('\n').filter((l) => !l.startsWith(' '))).toEqual([
      `${f.newer.id}  2026-01-03 10:20Z · 1 turn  "Add a test"`,
      `${f.older.id}  2026-01-02 03:04Z · 2 turns  "Fix the typo in README.md"`,
      '',
    ]);
    expect((await runMain(['sessions', '--cwd', f.a], env)).stdout).toBe(ws.stdout);
    expect(existsSync(join(f.home, 'cache', 'sessions.txt')), 'the workspace scope keeps its own').toBe(true);
    // A workspace without sessions: its (empty) listing is kept too, and says so on stderr each time.
    const none = tempDir();
    const noneMsg = `no sessions for ${none} under ${join(f.home, 'sessions')} (--all lists every workspace)\n`;
    for (let i = 0; i < 2; i++) {
      const r = await runMain(['sessions', '--cwd', none], env);
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '', noneMsg]);
    }
    expect(readFileSync(join(f.home, 'cache', 'sessions.txt'), 'utf8')).toMatch(/,0,\[\]\]\n$/);
    expect(readFileSync(kept).subarray(-200)).toEqual(original.subarray(-200));
    // An output that styles (as a terminal's does): the plain text kept is not its text.
    class Marked extends Output {
      override style(k: string, t: string): string {
        return `<${k}>${t}</${k}>`;
      }
    }
    const marked: Buffer[] = [];
    const out = new Marked({ write: (c: string | Uint8Array) => marked.push(Buffer.from(c)) }, false, true);
    expect(await main(['sessions', '--all'], { out, err: new Output({ write: () => true }, false), env })).toBe(0);
    out.flush();
    expect(Buffer.concat(marked).toString().split('\n')[0]).toBe(`<bold>${f.other.id}</bold>  2026-01-04 00:00Z · 0 turns · ${f.b}`);
    // A secret configured for redaction is redacted in kept text too (it goes the text way).
    const red: string[] = [];
    const rout = new Output({ write: (c: string | Uint8Array) => red.push(Buffer.from(c).toString()) }, false, true);
    rout.redact(['Fix the typo']);
    expect(await all()).toBe(truth); // kept again for the plain style
    expect(await main(['sessions', '--all'], { out: rout, err: new Output({ write: () => true }, false), env })).toBe(0);
    rout.flush();
    expect(red.join('')).toBe(truth.replace('Fix the typo', '[REDACTED]'));
    // A turn appended through the store: the next listing says so.
    let now = T3 + 10;
    const store = new SessionStore({ root: join(f.home, 'sessions'), clock: () => now++ });
    const s = await store.open(f.newer.id);
    s.session.append('turn/start', { turn: 2 });
    s.session.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
    await store.close();
    const grown = truth.replace('1 turn ·', '2 turns ·');
    expect(await all()).toBe(grown);
    // That listing compacted the append and kept its text: the next one prints it.
    writeFileSync(kept, readFileSync(kept, 'latin1').replace('Add a test', 'Add a TEST'), 'latin1');
    expect(await all()).toBe(grown.replace('Add a test', 'Add a TEST'));
  });
  it('another release of dsh lists afresh: its files unpacked with the same size and mtime are not the same build', async () => {
    // npm unpacks every file of a package with one fixed mtime, and the module that keeps the
    // text is often unchanged between releases (its code, or its chunk, the same size): only the
    // version tells them apart.
    const { kept, all } = await allListing();
    try {
      release.version = '1.0.0';
      const truth = await all();
      expect(truth).toContain('"Add a test"');
      await sleep(2100);
      for (let i = 0; i < 3 && !existsSync(kept); i++) expect(await all()).toBe(truth);
      expect(existsSync(kept)).toBe(true);
      // What 1.0.0 rendered, marked (same length) so that printing it shows.
      writeFileSync(kept, readFileSync(kept, 'latin1').replace('Add a test', 'Add a TEST'), 'latin1');
      expect(await all()).toBe(truth.replace('Add a test', 'Add a TEST'));
      release.version = '1.0.1';
      expect(await all()).toBe(truth);
    } finally {
      release.version = undefined;
    }
  });
  it('a huge file at the kept name (grown, damaged) is a miss without being read whole', async () => {
    const { kept, all } = await allListing();
    const truth = await all();
    await sleep(2100);
    for (let i = 0; i < 3 && !existsSync(kept); i++) expect(await all()).toBe(truth);
    const original = readFileSync(kept);
    // The kept text followed by a sparse GiB of zeros: its head line still matches.
    truncateSync(kept, 1 << 30);
    const started = Date.now();
    expect(await all()).toBe(truth);
    // Read whole, it took ~5 s here (and a GiB of memory); a listing takes ~50 ms.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(readFileSync(kept)).toEqual(original);
  });
  it('a session held open is printed afresh inside the kept text: its turns and holder as they are now', async () => {
    const { f, kept, all } = await allListing();
    const truth = await all();
    let now = T3 + 10;
    const store = new SessionStore({ root: join(f.home, 'sessions'), clock: () => now++ });
    const held = await store.open(f.newer.id);
    try {
      const open = truth.replace('1 turn ·', `1 turn · open in pid ${process.pid} ·`);
      await sleep(2100);
      for (let i = 0; i < 4; i++) expect(await all()).toBe(open);
      expect(existsSync(kept)).toBe(true);
      // The rest is the kept text (a same-length edit of another session's title shows); the live session's lines are not.
      writeFileSync(
        kept,
        readFileSync(kept, 'latin1').replace('Fix the typo', 'Fix THE typo').replace('Add a test', 'Add a TEST'),
        'latin1',
      );
      expect(await all()).toBe(open.replace('Fix the typo', 'Fix THE typo'));
      held.session.append('turn/start', { turn: 2 });
      held.session.append('turn/end', { turn: 2, reason: { kind: 'completed' } });
      await held.flush();
      expect(await all()).toBe(open.replace('Fix the typo', 'Fix THE typo').replace('1 turn ·', '2 turns ·'));
    } finally {
      await store.close();
    }
    expect(await all()).toBe(truth.replace('1 turn ·', '2 turns ·'));
  });
});

describe('dsh sessions --all as one write (issue 13 item 3)', () => {
  /** The listing computed from the logs themselves, with its own formatting (no CLI code). */
  function expected(paths: readonly string[]): string {
    const pad = (n: number): string => String(n).padStart(2, '0');
    const rows = paths.map((path) => {
      const events = readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; cwd: string; createdAt: number; type?: string; data?: Record<string, unknown> });
      const h = events[0]!;
      const user = events.find((e) => e.type === 'user/message');
      const text = user === undefined ? undefined : (user.data!.content as { text: string }[]).map((b) => b.text).join(' ');
      const turns = events.filter((e) => e.type === 'turn/end').length;
      const d = new Date(h.createdAt);
      const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
      const when = `${day} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}Z`;
      const folded = text?.split(/\s+/).filter(Boolean).join(' ');
      const title = folded === undefined ? '' : `  "${[...folded].length > 60 ? `${[...folded].slice(0, 59).join('')}…` : folded}"`;
      const line = `${h.id}  ${when} · ${turns} turn${turns === 1 ? '' : 's'} · ${h.cwd}${title}\n  ${path}\n`;
      return { createdAt: h.createdAt, id: h.id, line };
    });
    rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
    return rows.map((r) => r.line).join('');
  }

  it('prints what the logs say, byte for byte, through a text sink and a byte sink, above the output buffer size', async () => {
    const home = tempDir();
    const root = join(home, 'sessions');
    const cwds = [tempDir(), tempDir()];
    const titles = ['Fix  the\ttypo\nplease', 'héllo wörld, ünïcode 日本語', 'x'.repeat(80), 'é'.repeat(61), 'plain'];
    let now = T1;
    const store = new SessionStore({ root, clock: () => now++ });
    const paths: string[] = [];
    for (let i = 0; i < 700; i++) {
      now = T1 + (i % 350) * 61_000; // two sessions share each time: the id breaks the tie
      const stored = await store.create({ cwd: cwds[i % 2]!, id: `s-${String(i).padStart(4, '0')}` });
      for (let t = 1; t <= i % 3; t++) {
        const s = stored.session;
        s.append('turn/start', { turn: t });
        const text = titles[(i + t) % titles.length]!;
        s.append(
          'user/message',
          { id: `m${t}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
          { surfaceOp: 'append' },
        );
        s.append('turn/end', { turn: t, reason: { kind: 'completed' } });
      }
      paths.push(stored.path);
    }
    await store.close();
    const want = expected(paths);
    expect(Buffer.byteLength(want)).toBeGreaterThan(1 << 17);
    const text = await runMain(['sessions', '--all'], { DSH_HOME: home });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(want);
    const chunks: Buffer[] = [];
    const sink = { write: (s: string | Uint8Array) => chunks.push(Buffer.from(s)) };
    const out = new Output(sink, false, true);
    const err = new Output({ write: () => true }, false);
    expect(await main(['sessions', '--all'], { out, err, env: { DSH_HOME: home } })).toBe(0);
    out.flush();
    expect(Buffer.concat(chunks).toString('utf8')).toBe(want);
  });
});
