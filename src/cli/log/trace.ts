/**
 * `dsh log trace <log> <seq>`: the provenance of one event: what it cites, what cites it, what it
 * replaced and what replaced it (both chains), and its related events.
 */
import { provenance, type ChainLink } from '../../query/index.js';
import { EXIT_OK } from '../errors.js';
import type { Io } from '../output.js';
import { loadNotices, readLog } from '../read-log.js';
import { fields } from '../table.js';
import { oneLine, safeJson } from '../text.js';
import { query } from './context.js';
import { refText, refsText } from './figures.js';

export interface TraceOptions {
  json?: boolean;
}

function chainText(links: readonly ChainLink[]): string {
  if (links.length === 0) return 'none';
  return links.map((l) => `${refText(l)} (depth ${l.depth}, via #${l.via})`).join('; ');
}

export async function runTrace(path: string, seq: number, opts: TraceOptions, io: Io): Promise<number> {
  const log = await readLog(path);
  for (const l of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${l}`);
  const p = query(log.file, () => provenance(log, seq));
  if (opts.json) {
    io.out.line(safeJson({ file: log.file, sessionId: log.header.id, ...p }, 2));
    return EXIT_OK;
  }
  const o = io.out;
  const surface =
    p.surface === 'visible'
      ? o.style('green', 'in the model-visible history')
      : p.surface === 'shadowed'
        ? o.style('yellow', 'replaced: no longer in the model-visible history')
        : 'not a surface event';
  const repaired = seq >= log.eventCount ? ` · ${o.style('yellow', '[crash repair]')}` : '';
  o.line(`${o.style('bold', refText(p.event))} · ${surface}${repaired}`);
  const rows: [string, string][] = [
    ['cites', refsText(p.cites)],
    ['cited by', refsText(p.citedBy)],
    ['replaces', refsText(p.replaces)],
    ['replaced by', p.replacedBy ? refText(p.replacedBy) : 'none'],
  ];
  if (p.chainBack.length) rows.push(['earlier', chainText(p.chainBack)]);
  if (p.chainForward.length > 1) rows.push(['later', chainText(p.chainForward)]);
  const related = new Map<string, typeof p.related>();
  for (const r of p.related) related.set(r.relation, [...(related.get(r.relation) ?? []), r]);
  for (const [rel, refs] of related) rows.push([oneLine(rel), refsText(refs)]);
  for (const l of fields(rows, o, '  ')) o.line(l);
  return EXIT_OK;
}
