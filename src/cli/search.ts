/**
 * `dsh sessions search QUERY`: full text over every stored session (prompts, answers, reasoning,
 * tool calls and results), and over other logs given with `--in`. Hits are session · turn · seq ·
 * kind and a snippet; `dsh view ID --seq N` opens one. The index lives in `$DSH_HOME/search` and is
 * brought up to date from the logs on each search (src/search); `--rebuild` starts it afresh.
 */
import { rmSync } from 'node:fs';
import { defaultRoot } from '../store/index.js';
import { search, SearchError, type DocKind, type SearchHit } from '../search/index.js';
import { CliError, EXIT_OK, EXIT_PROBLEM } from './errors.js';
import type { Io, Output } from './output.js';
import { checkSessionsRoot, indexPath } from './home.js';
import { workspaceDir } from './workspace.js';
import { oneLine, plural, safeJson } from './text.js';

export interface SearchCliOptions {
  cwd?: string;
  in?: string[];
  kind?: string[];
  limit?: number;
  json?: boolean;
  rebuild?: boolean;
}

export const DOC_KINDS: readonly DocKind[] = ['prompt', 'context', 'answer', 'reasoning', 'call', 'result', 'title'];

function highlighted(h: SearchHit, out: Output): string {
  if (!h.match) return oneLine(h.snippet);
  const [a, b] = h.match;
  return `${oneLine(h.snippet.slice(0, a))}${out.style('bold', oneLine(h.snippet.slice(a, b)))}${oneLine(h.snippet.slice(b))}`;
}

export async function runSearch(query: string[], opts: SearchCliOptions, io: Io): Promise<number> {
  const text = query.join(' ');
  const root = defaultRoot(io.env);
  checkSessionsRoot(root, io.env);
  const kinds = opts.kind?.map((k) => {
    if (!(DOC_KINDS as readonly string[]).includes(k))
      throw new CliError('USAGE', `--kind ${JSON.stringify(k)}: expected one of ${DOC_KINDS.join(', ')}`);
    return k as DocKind;
  });
  const index = indexPath(io.env);
  if (opts.rebuild) for (const suffix of ['', '-wal', '-shm']) rmSync(index + suffix, { force: true });
  let r;
  try {
    r = search(text, {
      root,
      index,
      ...(opts.in ? { extra: opts.in } : {}),
      ...(opts.cwd !== undefined ? { cwd: workspaceDir(opts.cwd) } : {}),
      ...(kinds ? { kinds } : {}),
      limit: opts.limit ?? 20,
    });
  } catch (e) {
    throw searchFailure(e);
  }
  if (opts.json) {
    io.out.line(safeJson({ query: text, ranked: r.ranked, order: r.order, hits: r.hits, index: { path: index, ...r.refresh } }, 2));
    return r.hits.length ? EXIT_OK : EXIT_PROBLEM;
  }
  const o = io.out;
  for (const h of r.hits) {
    const where = [oneLine(h.session), h.turn !== null ? `turn ${h.turn}` : 'no turn', `seq ${h.seq}`, h.kind].join(' · ');
    o.line(`${o.style('bold', where)}  ${highlighted(h, o)}`);
    if (h.format !== 'dsh') o.line(`  ${o.style('dim', oneLine(h.path))}`);
  }
  const updated = r.refresh.indexed + r.refresh.reindexed;
  const note = updated ? ` (indexed ${plural(updated, 'log')} now)` : '';
  const full = r.hits.length === (opts.limit ?? 20);
  const which =
    r.order === 'rank'
      ? full
        ? ' (the best ones; --limit shows more)'
        : ''
      : r.order === 'rank-newest'
        ? ' (the best of the newest 5,000 matching texts: more match, too many to rank; add a word)'
        : ' (newest first: over 5,000 texts match, too many to rank; add a word)';
  io.err.line(
    r.hits.length
      ? `${plural(r.hits.length, 'hit')}${which}${note} · open one with: dsh view SESSION --seq N`
      : `no match for ${oneLine(JSON.stringify(text))} in ${plural(r.refresh.files, 'log')}${note}`,
  );
  return r.hits.length ? EXIT_OK : EXIT_PROBLEM;
}

/**
 * What a failed search becomes: the search layer's own BAD_QUERY, recognised by type, is a usage
 * error; anything else, even an object that carries the same `code`, stays what it is.
 */
export function searchFailure(e: unknown): unknown {
  return e instanceof SearchError && e.code === 'BAD_QUERY' ? new CliError('USAGE', e.message, { cause: e }) : e;
}
