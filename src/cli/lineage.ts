/**
 * `dsh sessions lineage <id>`: the fork tree a session belongs to. A fork's header names its
 * parent (`parentSession`) and how much of the parent's log it inherited (`seedLength`), so the
 * tree is read from the store's listing alone: the root is the furthest ancestor the store holds,
 * and every session descending from it is shown, each under its parent with the parent's seq it
 * was forked at. A parent the store does not hold (deleted, or in another store) is named as such.
 */
import type { Store, StoreSessionInfo } from '../store/index.js';
import { EXIT_OK } from './errors.js';
import type { Io } from './output.js';
import { pickSession } from './session-ref.js';
import { storeFor } from './store.js';
import { humanTime, listRows, type SessionSummary } from './sessions.js';
import { oneLine, plural, safeJson, truncate } from './text.js';

export interface LineageOptions {
  json?: boolean;
}

export interface LineageNode {
  id: string;
  parentSession: string | null;
  /** The parent's seq this session was forked after; null for the root. */
  forkSeq: number | null;
  depth: number;
  title: string | null;
  turns: number | null;
  createdAt: number;
  path: string;
}

export interface Lineage {
  /** The session asked about. */
  id: string;
  /** The furthest ancestor the store holds. */
  root: string;
  /** The root's own parent when the store does not hold it (null when the root is no fork). */
  missingParent: string | null;
  /** Depth first from the root; children oldest first. */
  sessions: LineageNode[];
}

/** The fork tree holding `id`, from the listing's rows (pure: tested without a store). */
export function lineageOf(rows: readonly SessionSummary[], id: string): Lineage {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const children = new Map<string, SessionSummary[]>();
  for (const r of rows) {
    if (r.parentSession === null) continue;
    const list = children.get(r.parentSession) ?? [];
    list.push(r);
    children.set(r.parentSession, list);
  }
  for (const list of children.values()) list.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  // Up to the furthest ancestor held; a cycle (hand-edited headers) stops at the first repeat.
  let root = byId.get(id)!;
  const seen = new Set([root.id]);
  while (root.parentSession !== null && byId.has(root.parentSession) && !seen.has(root.parentSession)) {
    root = byId.get(root.parentSession)!;
    seen.add(root.id);
  }
  const sessions: LineageNode[] = [];
  const visited = new Set<string>();
  const visit = (r: SessionSummary, depth: number): void => {
    if (visited.has(r.id)) return;
    visited.add(r.id);
    sessions.push({
      id: r.id,
      parentSession: r.parentSession,
      forkSeq: r.forkSeq,
      depth,
      title: r.title,
      turns: r.turns,
      createdAt: r.createdAt,
      path: r.path,
    });
    for (const c of children.get(r.id) ?? []) visit(c, depth + 1);
  };
  visit(root, 0);
  const missingParent = root.parentSession !== null && !byId.has(root.parentSession) ? root.parentSession : null;
  return { id, root: root.id, missingParent, sessions };
}

export async function runSessionsLineage(ref: string, opts: LineageOptions, io: Io): Promise<number> {
  const store = await storeFor(io.env);
  try {
    return await lineageIn(store, ref, opts, io);
  } finally {
    await store.close();
  }
}

async function lineageIn(store: Store, ref: string, opts: LineageOptions, io: Io): Promise<number> {
  let listed: StoreSessionInfo[] = [];
  const { rows, problems } = await listRows(store, (sessions) => {
    listed = sessions;
    return sessions;
  });
  const target = pickSession({ sessions: listed, problems }, ref, store.location);
  const tree = lineageOf(rows, target.id);
  if (opts.json) {
    io.out.line(safeJson(tree, 2));
    return EXIT_OK;
  }
  if (tree.missingParent !== null) io.out.line(io.out.style('dim', `fork of ${oneLine(tree.missingParent)} (not in this store)`));
  const prefixes = treePrefixes(tree.sessions.map((n) => n.depth));
  tree.sessions.forEach((n, i) => {
    const facts = [humanTime(n.createdAt), n.turns === null ? 'turns ?' : plural(n.turns, 'turn')];
    if (n.forkSeq !== null) facts.unshift(`forked at seq ${n.forkSeq}`);
    const indent = prefixes[i]!;
    const id = n.id === tree.id ? io.out.style('bold', `${oneLine(n.id)} ◀`) : oneLine(n.id);
    io.out.line(`${indent}${id}  ${facts.join(' · ')}${n.title ? `  "${oneLine(truncate(n.title, 60))}"` : ''}`);
  });
  return EXIT_OK;
}

/**
 * Tree-drawing prefixes for nodes listed depth first: `├─ ` for a node with a later sibling,
 * `└─ ` for the last, and `│  ` under an ancestor that still has siblings to come.
 */
export function treePrefixes(depths: readonly number[]): string[] {
  // A node has a later sibling when a node of its depth comes before any shallower one.
  const hasNext = depths.map((d, i) => {
    for (let j = i + 1; j < depths.length; j++) {
      if (depths[j]! < d) return false;
      if (depths[j] === d) return true;
    }
    return false;
  });
  const open: boolean[] = []; // per depth: the ancestor at that depth has a later sibling
  return depths.map((d, i) => {
    open.length = d;
    const bars = open
      .slice(1)
      .map((o) => (o ? '│  ' : '   '))
      .join('');
    open[d] = hasNext[i]!;
    return d === 0 ? '' : `${bars}${hasNext[i] ? '├─ ' : '└─ '}`;
  });
}
