/**
 * Which logs a fleet command reads: the files and session ids given, or the store's sessions
 * (`--all`), narrowed to a workspace (`--cwd`) and to those written since a date (`--since`).
 * Listing reads only each log's header, so selecting from a large store costs little; each
 * selected log is then read through `readLog`, the CLI's one way of reading a log.
 */
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { SessionInfo } from '../../store/index.js';
import { CliError } from '../errors.js';
import type { Io } from '../output.js';
import { oneLine } from '../text.js';

export interface Selection {
  all?: boolean;
  since?: number;
  cwd?: string;
}

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: an ISO 8601 date or time (`2026-11-01`, `2026-11-01T09:00Z`), or an age (`30m`, `12h`,
 * `7d`, `2w`) counted back from now.
 */
export function parseSince(value: string, now = Date.now()): number {
  const age = /^(\d{1,6})([mhdw])$/.exec(value);
  if (age) return now - Number(age[1]) * UNITS[age[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    const t = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
    if (!Number.isNaN(t) && dayExists(value)) return t;
  }
  throw new InvalidArgumentError('expected a date (2026-11-01, 2026-11-01T09:00Z) or an age (30m, 12h, 7d, 2w)');
}

/** Does the month of `value` (`YYYY-MM-DD…`) have its day? Date.parse takes 2026-02-30 as 2026-03-02. */
function dayExists(value: string): boolean {
  const [y, m, d] = [Number(value.slice(0, 4)), Number(value.slice(5, 7)), Number(value.slice(8, 10))];
  const date = new Date(Date.UTC(2000, m - 1, d));
  date.setUTCFullYear(y); // Date.UTC reads years 0-99 as 1900-1999
  return m >= 1 && m <= 12 && d >= 1 && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

export function wantsStore(sel: Selection): boolean {
  return sel.all === true || sel.since !== undefined || sel.cwd !== undefined;
}

/** The store's sessions matching the selection, oldest first; what could not be listed goes to stderr. */
export async function selectStored(sel: Selection, io: Io): Promise<{ sessions: SessionInfo[]; root: string }> {
  // Loaded here, not with the module: `dsh log`'s option parsing imports parseSince from it.
  const [{ storeFor }, { SessionStore }] = await Promise.all([import('../store.js'), import('../../store/index.js')]);
  // Without the listing index: these commands read every log they select, so a stat of each costs
  // nothing beside that, and --since must see every log's modification time, not the index's.
  const store = await storeFor(io.env, { listingIndex: false });
  if (!(store instanceof SessionStore)) {
    await store.close();
    // The fleet commands read each selected log as a file; PostgreSQL sessions are read by id.
    throw new CliError(
      'USAGE',
      `--all, --since and --cwd select the JSONL store's files; with the PostgreSQL store (${oneLine(store.location)}) name the ` +
        'sessions by id, or move them with dsh sessions export',
    );
  }
  const { sessions, problems } = await store.list();
  for (const p of problems)
    io.err.line(`${io.err.style('yellow', 'warning')}: ${oneLine(p.path)}: not read: ${oneLine(p.error.message)} [${p.error.code}]`);
  const cwd = sel.cwd !== undefined ? resolve(sel.cwd) : undefined;
  const picked = sessions.filter((s) => (cwd === undefined || s.header.cwd === cwd) && (sel.since === undefined || s.mtimeMs >= sel.since));
  picked.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.id < b.id ? -1 : 1));
  return { sessions: picked, root: store.root };
}

/** Files or ids, or a store selection: not both. */
export function checkSelection(args: readonly string[], sel: Selection): void {
  if (args.length > 0 && wantsStore(sel))
    throw new CliError('USAGE', '--all, --since and --cwd select stored sessions; give either them or log files and session ids, not both');
}
