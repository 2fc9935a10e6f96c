/**
 * `dsh sessions lineage`: the fork tree of a session, from the store's listing. Sessions and
 * forks are made through the store's own API with a fixed clock, so ids, times and fork seqs
 * are known; the tree's shape is written by hand.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { lineageOf, treePrefixes } from '../../src/cli/lineage.js';
import type { SessionSummary } from '../../src/cli/sessions.js';
import { SessionStore } from '../../src/store/index.js';
import { tempDir } from './support/agent.js';
import { runMain } from './support/inproc.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 0);

function row(id: string, parentSession: string | null, forkSeq: number | null, createdAt: number): SessionSummary {
  return {
    id,
    cwd: '/w',
    createdAt,
    modifiedAt: createdAt,
    bytes: 1,
    path: `/s/${id}`,
    turns: 1,
    title: `t-${id}`,
    prompt: `t-${id}`,
    parentSession,
    forkSeq,
    lockedByPid: null,
  };
}

describe('lineageOf', () => {
  // a ─┬─ b (seq 5) ── d (seq 9)
  //    └─ c (seq 3)        e: another tree
  const rows = [row('d', 'b', 9, 4), row('c', 'a', 3, 3), row('a', null, null, 1), row('b', 'a', 5, 2), row('e', null, null, 0)];

  it('climbs to the root and lists its tree depth first, children oldest first', () => {
    const t = lineageOf(rows, 'd');
    expect(t.root).toBe('a');
    expect(t.missingParent).toBeNull();
    expect(t.sessions.map((n) => [n.id, n.depth, n.forkSeq])).toEqual([
      ['a', 0, null],
      ['b', 1, 5],
      ['d', 2, 9],
      ['c', 1, 3],
    ]);
    // Any member gives the same tree.
    expect(lineageOf(rows, 'c').sessions).toEqual(t.sessions);
    expect(lineageOf(rows, 'e').sessions.map((n) => n.id)).toEqual(['e']);
  });

  it('names a parent the store does not hold, and survives a cycle of hand-edited headers', () => {
    const orphan = lineageOf([row('x', 'gone', 4, 1), row('y', 'x', 2, 2)], 'y');
    expect(orphan).toMatchObject({ root: 'x', missingParent: 'gone' });
    expect(orphan.sessions.map((n) => n.id)).toEqual(['x', 'y']);
    const cycle = lineageOf([row('p', 'q', 1, 1), row('q', 'p', 1, 2)], 'p');
    expect(cycle.sessions.map((n) => n.id).sort()).toEqual(['p', 'q']);
  });
});

interface ForkTree {
  home: string;
  ids: Record<'root' | 'left' | 'right' | 'deep', string>;
  seqs: Record<'left' | 'right' | 'deep', number>;
}

describe('treePrefixes', () => {
  it('draws branches, last branches and the bars of ancestors with siblings to come', () => {
    // r ├─ a │ ├─ a1 │ └─ a2 │    └─ a2x ├─ b └─ c    └─ c1
    expect(treePrefixes([0, 1, 2, 2, 3, 1, 1, 2])).toEqual(['', '├─ ', '│  ├─ ', '│  └─ ', '│     └─ ', '├─ ', '└─ ', '   └─ ']);
  });
});

async function forkTree(): Promise<ForkTree> {
  const home = tempDir();
  const cwd = tempDir();
  let now = T0;
  const store = new SessionStore({ root: join(home, 'sessions'), clock: () => (now += 60_000) });
  // Returns the seq of the turn's turn/end: the fork points.
  const turn = (s: { append: SessionStoreAppend; events: readonly unknown[] }, turn: number, text: string): number => {
    s.append('turn/start', { turn });
    s.append('step/start', { turn, step: 1 });
    s.append(
      'user/message',
      { id: `m${turn}-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
      {
        surfaceOp: 'append',
      },
    );
    s.append('step/end', { turn, step: 1 });
    s.append('turn/end', { turn, reason: { kind: 'completed' } });
    return s.events.length - 1;
  };
  const root = await store.create({ cwd, id: 'aaaa0000-0000-4000-8000-000000000001' });
  const end1 = turn(root.session, 1, 'first');
  const end2 = turn(root.session, 2, 'second');
  const left = await store.fork(root.session.id, end1, { id: 'bbbb0000-0000-4000-8000-000000000002' });
  const endLeft = turn(left.session, 2, 'left');
  const right = await store.fork(root.session.id, end2, { id: 'cccc0000-0000-4000-8000-000000000003' });
  const deep = await store.fork(left.session.id, endLeft, { id: 'dddd0000-0000-4000-8000-000000000004' });
  await store.close();
  return {
    home,
    ids: { root: root.session.id, left: left.session.id, right: right.session.id, deep: deep.session.id },
    seqs: { left: end1, right: end2, deep: endLeft },
  };
}
type SessionStoreAppend = Awaited<ReturnType<SessionStore['create']>>['session']['append'];

describe('dsh sessions lineage', () => {
  it('prints the tree with fork seqs and marks the session asked about; --json gives the same tree', async () => {
    const { home, ids, seqs } = await forkTree();
    const r = await runMain(['sessions', 'lineage', ids.deep.slice(0, 6)], { DSH_HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.replace(/ {2}\d{4}-.*$/, '').replace(/ · .*/, ''))).toEqual([
      `${ids.root}`,
      `├─ ${ids.left}  forked at seq ${seqs.left}`,
      `│  └─ ${ids.deep} ◀  forked at seq ${seqs.deep}`,
      `└─ ${ids.right}  forked at seq ${seqs.right}`,
    ]);
    expect(lines[0]).toContain('2 turns  "first"');
    const json = await runMain(['sessions', 'lineage', '--json', ids.right], { DSH_HOME: home });
    const t = JSON.parse(json.stdout) as { root: string; id: string; sessions: { id: string; forkSeq: number | null; depth: number }[] };
    expect(t.root).toBe(ids.root);
    expect(t.id).toBe(ids.right);
    expect(t.sessions.map((n) => [n.id, n.depth, n.forkSeq])).toEqual([
      [ids.root, 0, null],
      [ids.left, 1, seqs.left],
      [ids.deep, 2, seqs.deep],
      [ids.right, 1, seqs.right],
    ]);
  });

  it('reads the store once: the session asked about and its tree come from one listing', async () => {
    const { home, ids } = await forkTree();
    const list = vi.spyOn(SessionStore.prototype, 'list');
    try {
      const r = await runMain(['sessions', 'lineage', ids.left], { DSH_HOME: home });
      expect(r.code, r.stderr).toBe(0);
      expect(list).toHaveBeenCalledTimes(1);
    } finally {
      list.mockRestore();
    }
  });

  it('an unknown id is SESSION_NOT_FOUND, exit 1', async () => {
    const { home } = await forkTree();
    const r = await runMain(['sessions', 'lineage', 'ffff9999'], { DSH_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no session "ffff9999".*\[SESSION_NOT_FOUND\]/);
  });
});
