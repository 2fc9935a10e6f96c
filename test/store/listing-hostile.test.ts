/**
 * The listing index against a careless or hostile hand in the root (review of 2026-12-04): the
 * index's own files replaced by what the store never writes there (a FIFO, a link to /dev/zero or
 * to a file outside the root, a directory), a temp name planted as a link, a journal line naming
 * a linked directory, forged snapshot rows under a valid digest. A listing or a writer must not
 * hang, throw an untyped error, write or read outside the root, or list what the full scan does
 * not. Cases that hung run in a child process (a blocked `open` cannot be timed out in-process);
 * every expected listing is what the test itself created.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore, logPath } from '../../src/store/index.js';
import { Child } from './support/proc.js';
import { tempDir } from './support/tmp.js';

const INDEX = 'listing-index';
const CACHE = 'listing-cache.json';
const OUTSIDE_TEXT = 'not the store\u0027s\n';

/** What a child reported: its one line, or a note that it did not answer in time (it is killed). */
async function inChild(args: string[], ms = 5000, as: { uid?: number; gid?: number } = {}): Promise<string> {
  const c = new Child(args, as);
  try {
    return await c.waitFor('', ms);
  } catch {
    return 'no answer (hung)';
  } finally {
    await c.kill();
  }
}

const newestJournal = (root: string): string =>
  join(
    root,
    readdirSync(root)
      .filter((n) => /^listing-journal\.\d+$/.test(n))
      .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))
      .pop()!,
  );

/** A root with session `a` (cwd /w) and the index built by a listing; and a file outside the root. */
async function storeWithIndex(): Promise<{ root: string; outside: string }> {
  const root = tempDir('dsh-hostile-');
  const outside = join(tempDir('dsh-outside-'), 'precious.txt');
  writeFileSync(outside, OUTSIDE_TEXT);
  const store = new SessionStore({ root, listingIndex: true });
  await (await store.create({ cwd: '/w', id: 'a' })).close();
  await store.list();
  return { root, outside };
}

/** Replace the file at `path` by something the store never writes there. */
const kinds: [string, (path: string, outside: string) => void][] = [
  ['a FIFO', (path) => execFileSync('mkfifo', [path])],
  ['a link to /dev/zero', (path) => symlinkSync('/dev/zero', path)],
  ['a link to a file outside the root', (path, outside) => symlinkSync(outside, path)],
  ['a directory', (path) => mkdirSync(path)],
];

function replaceBy(path: string, make: (path: string, outside: string) => void, outside: string): void {
  rmSync(path, { force: true });
  make(path, outside);
}

describe('the listing index with its own files replaced', () => {
  for (const [what, make] of kinds) {
    it(`the newest journal is ${what}: a listing returns every session; the file outside is untouched`, async () => {
      const { root, outside } = await storeWithIndex();
      replaceBy(newestJournal(root), make, outside);
      expect(await inChild(['list-once', root, 'index'])).toBe('listed ["a"] []');
      expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
    });

    it(`the newest journal is ${what}: a create returns, writes nothing outside, and the next listing has it`, async () => {
      const { root, outside } = await storeWithIndex();
      replaceBy(newestJournal(root), make, outside);
      expect(await inChild(['create-once', root, 'b'])).toBe('created');
      expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      expect(await inChild(['list-once', root, 'index'])).toBe('listed ["b","a"] []');
    });

    it(`the snapshot is ${what}: a listing returns every session`, async () => {
      const { root, outside } = await storeWithIndex();
      await (await new SessionStore({ root, listingIndex: true }).create({ cwd: '/w', id: 'b' })).close();
      replaceBy(join(root, INDEX), make, outside);
      expect(await inChild(['list-once', root, 'index'])).toBe('listed ["b","a"] []');
      expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
    });

    it(`the listing cache is ${what}: a listing without the index, and a rescan, return every session`, async () => {
      const { root, outside } = await storeWithIndex();
      replaceBy(join(root, CACHE), make, outside);
      expect(await inChild(['list-once', root, 'scan'])).toBe('listed ["a"] []');
      expect(await inChild(['list-once', root, 'rescan'])).toBe('listed ["a"] []');
      expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
    });
  }

  for (const [what, make] of kinds.slice(0, 2)) {
    it(`a session's lock is ${what}: listings return it, held by nobody`, async () => {
      const { root, outside } = await storeWithIndex();
      make(join(root, '--w--', 'a', 'session.lock'), outside);
      for (const how of ['scan', 'rescan']) expect(await inChild(['list-once', root, how])).toBe('listed ["a"] []');
    });

    it(`the index lock is ${what}: a listing that rebuilds the index returns every session`, async () => {
      const { root, outside } = await storeWithIndex();
      make(join(root, 'listing-index.lock'), outside);
      unlinkSync(join(root, INDEX));
      expect(await inChild(['list-once', root, 'index'])).toBe('listed ["a"] []');
    });
  }

  it('a journal bigger than any the store writes (3 GB, sparse) is not read: the listing rebuilds and lists every session', async () => {
    const { root } = await storeWithIndex();
    execFileSync('truncate', ['-s', '3G', newestJournal(root)]);
    const listed = await new SessionStore({ root, listingIndex: true }).list();
    expect(listed.sessions.map((s) => s.id)).toEqual(['a']);
  });

  for (const [file, listingIndex] of [
    [INDEX, true],
    [CACHE, false],
  ] as const) {
    it(`${file}'s temp name planted as a link outside the root: writing ${file} leaves the outside file alone`, async () => {
      const { root, outside } = await storeWithIndex();
      const store = new SessionStore({ root, listingIndex });
      await (await store.create({ cwd: '/w', id: 'b' })).close(); // something for the listing to write down
      rmSync(join(root, file), { force: true });
      symlinkSync(outside, join(root, `${file}.${process.pid}.tmp`));
      expect((await store.list()).sessions.map((s) => s.id)).toEqual(['b', 'a']);
      expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      expect(lstatSync(join(root, file)).isFile()).toBe(true);
    });
  }
});

describe('a journal line naming a linked directory', () => {
  for (const linked of ['project', 'session'] as const) {
    it(`a ${linked} directory that is a link out of the root is not listed (the full scan does not list it either)`, async () => {
      const { root } = await storeWithIndex();
      // A well-formed session outside the root, its header naming the linked path (cwd /evil).
      const away = tempDir('dsh-away-');
      mkdirSync(join(away, 's'));
      writeFileSync(
        join(away, 's', 'session.jsonl'),
        `${JSON.stringify({ type: 'session', version: 0, id: 's', createdAt: 5, cwd: '/evil' })}\n`,
      );
      if (linked === 'project') symlinkSync(away, join(root, '--evil--'));
      else {
        mkdirSync(join(root, '--evil--'));
        symlinkSync(join(away, 's'), join(root, '--evil--', 's'));
      }
      appendFileSync(newestJournal(root), `\n${JSON.stringify(['w', '--evil--/s'])}\n`);
      const store = new SessionStore({ root, listingIndex: true });
      expect((await store.list(undefined, { rescan: true })).sessions.map((s) => s.id)).toEqual(['a']);
      appendFileSync(newestJournal(root), `\n${JSON.stringify(['w', '--evil--/s'])}\n`);
      expect((await store.list()).sessions.map((s) => s.id)).toEqual(['a']);
    });
  }
});

describe('a journal line naming what no directory can be', () => {
  it('a segment or project name longer than a file name may be (300 bytes): the listing lists the rest, no ENAMETOOLONG', async () => {
    const { root } = await storeWithIndex();
    const long = 'x'.repeat(300);
    appendFileSync(newestJournal(root), `\n${JSON.stringify(['w', `--w--/${long}`])}\n${JSON.stringify(['w', `${long}/a`])}\n`);
    const listed = await new SessionStore({ root, listingIndex: true }).list();
    expect([listed.sessions.map((s) => s.id), listed.problems]).toEqual([['a'], []]);
  });
});

describe('a session directory the listing user cannot read (chmod 000)', () => {
  it('is an UNREADABLE problem and the rest are listed (EACCES ended every listing)', async () => {
    const { root } = await storeWithIndex();
    await (await new SessionStore({ root, listingIndex: true }).create({ cwd: '/w', id: 'b' })).close();
    execFileSync('chmod', ['-R', 'a+rwX', root]);
    chmodSync(join(root, '--w--', 'b'), 0o000);
    // Root reads everything: the listing runs as nobody there, so that the mode applies.
    const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    try {
      for (const how of ['scan', 'index', 'rescan'])
        expect(await inChild(['list-once', root, how], 5000, as)).toBe('listed ["a"] ["UNREADABLE"]');
    } finally {
      chmodSync(join(root, '--w--', 'b'), 0o700); // so that a test run by another user than root can remove it
    }
  });
});

describe('a project directory the listing user cannot read (chmod 000)', () => {
  it('is an UNREADABLE problem, every listing says so, and the other projects are listed (EACCES ended every listing)', async () => {
    const { root } = await storeWithIndex();
    await (await new SessionStore({ root, listingIndex: true }).create({ cwd: '/v', id: 'b' })).close();
    execFileSync('chmod', ['-R', 'a+rwX', root]);
    chmodSync(join(root, '--v--'), 0o000);
    const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    try {
      for (const how of ['scan', 'rescan', 'index', 'index'])
        expect(await inChild(['list-once', root, how], 5000, as), how).toBe('listed ["a"] ["UNREADABLE"]');
    } finally {
      chmodSync(join(root, '--v--'), 0o700); // so that a test run by another user than root can remove it
    }
  });
});

describe("a session lock the listing user cannot read (another user's, mode 0600; here 0000)", () => {
  it('the session is listed, its holder unknown (EACCES on the lock ended listings, or hid the session as a problem)', async () => {
    const { root } = await storeWithIndex();
    execFileSync('chmod', ['-R', 'a+rwX', root]);
    const lock = join(root, '--w--', 'a', 'session.lock');
    writeFileSync(lock, '{}\n', { mode: 0o000 });
    const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    for (const how of ['scan', 'rescan']) expect(await inChild(['list-once', root, how], 5000, as)).toBe('listed ["a"] []');
  });
});

describe('a compressed log name that is a link loop', () => {
  it('listings report it as NOT_A_FILE and list the rest (it ended them with ELOOP)', async () => {
    const { root } = await storeWithIndex();
    const zstd = join(root, '--w--', 'loop', 'session.jsonl.zstd');
    mkdirSync(join(root, '--w--', 'loop'));
    symlinkSync(zstd, zstd);
    for (const listingIndex of [false, true]) {
      const listed = await new SessionStore({ root, listingIndex }).list();
      expect([listed.sessions.map((s) => s.id), listed.problems.map((p) => [p.path, p.error.code])]).toEqual([
        ['a'],
        [[join(root, '--w--', 'loop', 'session.jsonl'), 'NOT_A_FILE']],
      ]);
    }
  });
});

/**
 * Rewrite the snapshot's row for `seg` (and re-sign it): the project directory's stamp set to what
 * it is now and the row's lock flag cleared, so that a listing trusts the row as it stands. With
 * `reread`, the stamp is cleared instead (the listing reads the project directory again) and
 * `extra` is added to its rows.
 */
function forge(root: string, seg: string, change: (row: unknown[]) => void, reread?: { extra: unknown }): void {
  const file = join(root, INDEX);
  const [metaLine, body] = readFileSync(file, 'utf8').split('\n') as [string, string];
  const meta = JSON.parse(metaLine) as { digest: string; stamps?: [string, number, number][] };
  const doc = JSON.parse(body) as unknown[][];
  doc.forEach((p, i) => {
    const name = p[0] as string;
    const rows = p[p.length - 1] as unknown[][];
    const st = statSync(join(root, name));
    // The stamp sits in the project's entry (format 1) or in the metadata line (later formats).
    const stamp = reread ? [null, null] : [st.mtimeMs, st.ctimeMs];
    if (meta.stamps !== undefined) meta.stamps[i] = [name, stamp[0]!, stamp[1]!];
    else [p[1], p[2]] = stamp;
    for (const row of rows) {
      if (row[0] !== seg) continue;
      row[1] = 0;
      change(row);
    }
    if (reread) rows.push(reread.extra as unknown[]);
  });
  const forged = JSON.stringify(doc);
  meta.digest = createHash('sha256').update(forged).digest('hex');
  writeFileSync(file, `${JSON.stringify(meta)}\n${forged}\n`);
}

describe('a forged snapshot (rows changed, digest recomputed)', () => {
  const cases: [string, (row: unknown[]) => void][] = [
    ['a segment climbing out of the root', (row) => (row[0] = `..${sep}..${sep}..${sep}etc`)],
    ['a segment with a separator', (row) => (row[0] = 'x/y')],
    [
      'a header whose parentSession is a number (dsh sessions printed it with .slice)',
      (row) => ((row[5] as { parentSession: unknown }).parentSession = 5),
    ],
    ['a header whose seedLength is a string', (row) => ((row[5] as { seedLength: unknown }).seedLength = 'x')],
    ['a header naming another id than its directory', (row) => ((row[5] as { id: string }).id = 'zzz')],
  ];
  for (const [what, change] of cases) {
    it(`${what}: the listing is the full scan's, every path under the root`, async () => {
      const { root } = await storeWithIndex();
      const path = logPath(root, '/w', 'a');
      const { type: _t, ...header } = JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as Record<string, unknown>;
      forge(root, 'a', change);
      const listed = await new SessionStore({ root, listingIndex: true }).list();
      expect(listed.sessions.map((s) => [s.id, s.path, s.header])).toEqual([['a', path, header]]);
    });
  }

  for (const extra of [null]) {
    it(`a row that is ${JSON.stringify(extra)} in a project directory read again: the full scan's listing, no TypeError`, async () => {
      const { root } = await storeWithIndex();
      forge(root, 'a', () => undefined, { extra });
      const listed = await new SessionStore({ root, listingIndex: true }).list();
      expect(listed.sessions.map((s) => [s.id, s.path])).toEqual([['a', logPath(root, '/w', 'a')]]);
    });
  }
});
