/**
 * `dsh sessions list|path`: the stored sessions. A listing must stay fast with thousands of big
 * logs (a picker that parses every file is a known failure of other agents), so it reads each
 * log's header line (the store's listing), then a bounded window at each end of the file: the
 * head for a title (the first prompt, or a recorded `session/title`), the tail for the latest turn
 * number. Turn numbers continue across resume and fork, so the last one is the session's turn
 * count. A value not found in its window is left out, never guessed.
 */
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ListingSummarizer, SessionInfo, SessionStore, Store, StoreListing, StoreSessionInfo } from '../store/index.js';
import { listingGeneration } from '../store/listing-index.js';
import type { JsonValue } from '../model/json.js';
import { foldSpaces } from '../model/unsafe-chars.js';
import { CliError, EXIT_OK } from './errors.js';
import { checkSessionsRoot } from './home.js';
import type { Io } from './output.js';
import { findSession } from './session-ref.js';
import { isPg, storeChoice } from './store-choice.js';
import { workspaceDir } from './workspace.js';
import { isoTime, oneLine, plural, safeJson, truncate } from './text.js';
import { cachedListingText, keepListingText, listingTextFile, type KeptText, type LiveRange } from './listing-text.js';

export interface ListOptions {
  all?: boolean;
  cwd?: string;
  limit?: number;
  json?: boolean;
  /** Scan every log instead of trusting the listing index (and rebuild it). */
  rescan?: boolean;
}

const WINDOW = 64 * 1024;

interface Row {
  type?: unknown;
  data?: { turn?: unknown; title?: unknown; source?: { kind?: unknown }; content?: unknown };
}

function parse(line: string): Row | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' ? (v as Row) : undefined;
  } catch {
    return undefined;
  }
}

function textOf(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const t = content
    .map((b) =>
      b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : '',
    )
    .join(' ');
  return t.trim() === '' ? undefined : t;
}

async function readWindow(path: string, size: number, fromEnd: boolean): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const len = Math.min(WINDOW, size);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, fromEnd ? size - len : 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** Complete lines only: a window cut mid-line leaves a fragment at each open end. */
function lines(text: string, cutStart: boolean, cutEnd: boolean): string[] {
  const all = text.split('\n');
  return all.slice(cutStart ? 1 : 0, cutEnd ? -1 : undefined).filter((l) => l !== '');
}

export interface SessionSummary {
  id: string;
  cwd: string | null;
  createdAt: number;
  modifiedAt: number;
  /** The log file's size; null for a session in a database. */
  bytes: number | null;
  /** The log file, or where the session is in a database. */
  path: string;
  turns: number | null;
  title: string | null;
  /** The first prompt (the title too, unless the log records a `session/title`). */
  prompt: string | null;
  parentSession: string | null;
  /** For a fork: the last seq of the parent it inherited (its header's seedLength - 1). */
  forkSeq: number | null;
  lockedByPid: number | null;
}

/** What a listing reads from a log beyond its header: remembered by the store's listing cache while the log is unchanged. */
interface LogFacts {
  [key: string]: string | number | null;
  title: string | null;
  turns: number | null;
  prompt: string | null;
}

/**
 * Title and turn count from the lines at each end of a log: `head` from its first event on,
 * `tail` ending at its last. `whole`: the two cover every event (so no turn-bearing line means
 * no turns yet).
 */
function fromEnds(head: readonly string[], tail: readonly string[], whole: boolean): LogFacts {
  let title: string | undefined;
  let turns: number | undefined;
  let prompt: string | undefined;
  for (const l of head) {
    const r = parse(l);
    if (title === undefined && r?.type === 'session/title' && typeof r.data?.title === 'string') title = r.data.title;
    if (prompt === undefined && r?.type === 'user/message' && r.data?.source?.kind === 'user') prompt = textOf(r.data.content);
    if (title !== undefined && prompt !== undefined) break;
  }
  title ??= prompt;
  for (let i = tail.length - 1; i >= 0; i--) {
    const t = parse(tail[i]!)?.data?.turn;
    if (typeof t === 'number' && Number.isSafeInteger(t)) {
      turns = t;
      break;
    }
  }
  if (turns === undefined && whole) turns = 0;
  return {
    title: title === undefined ? null : foldSpaces(title, true),
    turns: turns ?? null,
    prompt: prompt === undefined ? null : foldSpaces(prompt, true),
  };
}

async function readFacts(info: { path: string; size: number }): Promise<LogFacts> {
  try {
    const head = await readWindow(info.path, info.size, false);
    const tail = info.size > WINDOW ? await readWindow(info.path, info.size, true) : head;
    return fromEnds(lines(head, false, info.size > WINDOW).slice(1), lines(tail, info.size > WINDOW, false), info.size <= WINDOW);
  } catch {
    return { title: null, turns: null, prompt: null }; // unreadable beyond the header: list what the header says
  }
}

const isFacts = (v: unknown): v is LogFacts =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.keys(v).length === 3 &&
  ((v as LogFacts).title === null || typeof (v as LogFacts).title === 'string') &&
  ((v as LogFacts).prompt === null || typeof (v as LogFacts).prompt === 'string') &&
  ((v as LogFacts).turns === null || Number.isSafeInteger((v as LogFacts).turns));

/** The listing's summarizer (the key names this computation: change it when readFacts changes). */
export const LOG_FACTS: ListingSummarizer<LogFacts> = { key: 'cli-sessions/title+turns+prompt/2', summarize: readFacts, check: isFacts };

function summaryRow(info: StoreSessionInfo, facts: LogFacts, bytes: number | null): SessionSummary {
  return {
    id: info.id,
    cwd: info.header.cwd ?? null,
    createdAt: info.header.createdAt,
    modifiedAt: Math.round(info.modifiedMs),
    bytes,
    path: info.location,
    turns: facts.turns,
    title: facts.title,
    prompt: facts.prompt,
    parentSession: info.header.parentSession ?? null,
    forkSeq: info.header.parentSession !== undefined && info.header.seedLength !== undefined ? info.header.seedLength - 1 : null,
    lockedByPid: info.lockedBy?.pid ?? null,
  };
}

/** A JSONL store's session as listed, with what LOG_FACTS read from its log. */
const storedRow = (info: SessionInfo): SessionSummary =>
  summaryRow(info, isFacts(info.summary) ? info.summary : { title: null, turns: null, prompt: null }, info.size);

/**
 * The sessions with their title and turn count: from the JSONL store's listing cache (read from
 * the log's ends only for new or changed logs), or from each PostgreSQL session's first and last
 * rows.
 */
export async function listRows(
  store: Store,
  keep: (sessions: StoreSessionInfo[]) => StoreSessionInfo[],
  opts: { rescan?: boolean } = {},
): Promise<{ rows: SessionSummary[]; problems: StoreListing['problems']; generation?: string }> {
  if (isPg(store)) {
    const { sessions, problems } = await store.list();
    const rows = await Promise.all(
      keep(sessions).map(async (info) => {
        const e = await store.ends(info.id, 200, 50).catch(() => undefined);
        return summaryRow(info, e ? fromEnds(e.head, e.tail, e.whole) : { title: null, turns: null, prompt: null }, null);
      }),
    );
    return { rows, problems };
  }
  const { sessions, problems, generation } = await (store as SessionStore).list(LOG_FACTS as ListingSummarizer<JsonValue>, opts);
  const rows = (keep(sessions) as SessionInfo[]).map(storedRow);
  return { rows, problems, ...(generation !== undefined ? { generation } : {}) };
}

const DAY_MS = 86_400_000;
/** The last day humanTime formatted: a listing's sessions are sorted, so most share their day with the one before. */
let lastDay = NaN;
let lastDayText = '';

/**
 * `2026-12-03 07:05Z`: the ISO time to the minute. A listing prints 10,000 of them: one `Date`
 * per day, not per session, and the hour and minute by arithmetic.
 */
export function humanTime(ms: number): string {
  // Years 1000–9999 have the plain four-digit ISO form; others keep isoTime's (+275760-…, or ms).
  if (ms >= -30610224000000 && ms < 253402300800000) {
    ms = Math.trunc(ms); // as Date does: -60000.5 is 23:59, not 23:58
    const day = Math.floor(ms / DAY_MS);
    if (day !== lastDay) {
      lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 10);
      lastDay = day;
    }
    const minute = Math.floor(ms / 60_000) - day * 1440; // of the day: 0–1439
    const h = Math.floor(minute / 60);
    const m = minute - h * 60;
    return `${lastDayText} ${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}Z`;
  }
  return isoTime(ms)
    .replace('T', ' ')
    .replace(/:\d\d\.\d+Z$/, 'Z');
}

export async function runSessionsList(opts: ListOptions, io: Io): Promise<number> {
  if (opts.all && opts.cwd !== undefined) throw new CliError('USAGE', '--all lists every workspace and --cwd names one; give one of them');
  const choice = await storeChoice(io.env);
  if (choice.kind === 'jsonl') checkSessionsRoot(choice.root, io.env);
  const cwd = opts.all ? undefined : workspaceDir(opts.cwd);
  let keeping: Keeping | undefined;
  // The JSONL store's code (the log codec with it) is most of this command's start-up: a listing
  // kept from last time, and a store with nothing stored yet, are printed without it.
  if (choice.kind === 'jsonl' && !opts.json && !opts.rescan) {
    const root = resolve(choice.root);
    if (!existsSync(root)) {
      io.err.line(noSessions(cwd, root));
      return EXIT_OK;
    }
    keeping = await keptListing(root, cwd, opts.limit, io);
    if (keeping.hit !== undefined && printKept(keeping.hit, keeping.live, cwd, root, io)) return EXIT_OK;
  }
  const { storeFor } = await import('./store.js');
  const store = await storeFor(io.env, {}, choice);
  try {
    return await listIn(store, opts, cwd, keeping, io);
  } finally {
    await store.close();
  }
}

async function listIn(store: Store, opts: ListOptions, cwd: string | undefined, keeping: Keeping | undefined, io: Io): Promise<number> {
  const { rows, problems, generation } = await listRows(
    store,
    (sessions) => {
      let chosen = cwd === undefined ? sessions : sessions.filter((s) => s.header.cwd === cwd);
      chosen = [...chosen].sort((a, b) => b.header.createdAt - a.header.createdAt || (a.id < b.id ? -1 : 1));
      return opts.limit !== undefined ? chosen.slice(0, opts.limit) : chosen;
    },
    opts.rescan ? { rescan: true } : {},
  );
  if (opts.json) {
    io.out.line(safeJson(rows, 2));
    return EXIT_OK;
  }
  for (const p of problems) {
    // Most store messages already start with the path; never print it twice.
    const where = p.error.message.startsWith(p.path) ? '' : `${oneLine(p.path)}: `;
    io.err.line(`${io.err.style('yellow', 'warning')}: ${where}${oneLine(p.error.message)} [${p.error.code}]`);
  }
  const lines = renderRows(rows, cwd === undefined, io.out);
  let kept: KeptText | undefined;
  if (keeping !== undefined && generation !== undefined && problems.length === 0) {
    kept = keptOf(lines, rows);
    keepListingText(keeping.file, { ...keeping.key, generation }, kept);
  }
  if (rows.length === 0) io.err.line(noSessions(cwd, store.location));
  else if (kept !== undefined) io.out.utf8Lines(kept.text);
  else io.out.line(lines.join('\n'));
  return EXIT_OK;
}

const noSessions = (cwd: string | undefined, location: string): string =>
  cwd === undefined
    ? `no sessions under ${oneLine(location)}`
    : `no sessions for ${oneLine(cwd)} under ${oneLine(location)} (--all lists every workspace)`;

/**
 * Where this listing's text is kept and its key but for the generation; and, when the store
 * names the listing it would make now, the text kept for it (if any) and its live sessions as
 * they are now.
 */
async function keptListing(root: string, cwd: string | undefined, limit: number | undefined, io: Io) {
  const file = listingTextFile(root, cwd === undefined);
  const key = { root, cwd: cwd ?? null, limit: limit ?? null, style: io.out.style('bold', '.') + io.out.style('dim', '.') };
  // What SessionStore.listingGeneration answers (the CLI's store keeps the listing index), asked
  // of the index's own module so that a hit loads nothing else of the store.
  const named = await listingGeneration(root, LOG_FACTS as ListingSummarizer<JsonValue>);
  const hit = named === undefined ? undefined : cachedListingText(file, { ...key, generation: named.generation });
  return { file, key, hit, live: named?.live ?? [] };
}

type Keeping = Awaited<ReturnType<typeof keptListing>>;

/**
 * The kept text with each live session's lines rendered afresh (an empty text: the listing had
 * no session); false (nothing printed) if a live session is missing.
 */
function printKept(kept: KeptText, live: readonly SessionInfo[], cwd: string | undefined, location: string, io: Io): boolean {
  const now = new Map(live.map((info) => [info.id, info]));
  if (!kept.live.every(([id]) => now.has(id))) return false;
  if (kept.text.length === 0) {
    io.err.line(noSessions(cwd, location));
    return true;
  }
  const out = io.out;
  const withCwd = cwd === undefined;
  let at = 0;
  for (const [id, start, end] of kept.live) {
    if (start > at) out.utf8Lines(kept.text.subarray(at, start));
    out.line(renderRows([storedRow(now.get(id)!)], withCwd, out).join('\n'));
    at = end;
  }
  if (at < kept.text.length) out.utf8Lines(kept.text.subarray(at));
  return true;
}

/** The listing's text to keep: its bytes, and where the lines of its live sessions (held open) are. */
function keptOf(lines: readonly string[], rows: readonly SessionSummary[]): KeptText {
  const live: LiveRange[] = [];
  let at = 0; // byte offset of line `line`
  let line = 0;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i]!.lockedByPid === null) continue;
    for (; line < 2 * i; line++) at += Buffer.byteLength(lines[line]!) + 1;
    live.push([rows[i]!.id, at, at + Buffer.byteLength(lines[line]!) + Buffer.byteLength(lines[line + 1]!) + 2]);
  }
  return { text: lines.length === 0 ? Buffer.alloc(0) : Buffer.from(`${lines.join('\n')}\n`), live };
}

/**
 * The text listing's lines, two a session. Given to the output as one text (one `write`): a
 * line at a time, 20,000 lines cost the output's per-line bookkeeping and encoding (~15 ms).
 */
function renderRows(rows: readonly SessionSummary[], withCwd: boolean, out: Pick<Io['out'], 'style'>): string[] {
  const lines: string[] = new Array<string>(rows.length * 2);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    let facts = `${humanTime(r.createdAt)} · ${r.turns === null ? 'turns ?' : plural(r.turns, 'turn')}`;
    if (r.parentSession) facts += ` · fork of ${oneLine(r.parentSession.slice(0, 8))}`;
    if (r.lockedByPid !== null) facts += ` · open in pid ${r.lockedByPid}`;
    if (withCwd && r.cwd) facts += ` · ${oneLine(r.cwd)}`;
    lines[2 * i] = `${out.style('bold', oneLine(r.id))}  ${facts}${r.title ? `  "${oneLine(truncate(r.title, 60))}"` : ''}`;
    lines[2 * i + 1] = `  ${out.style('dim', oneLine(r.path))}`;
  }
  return lines;
}

export async function runSessionsPath(ref: string, io: Io): Promise<number> {
  const { storeFor } = await import('./store.js');
  const store = await storeFor(io.env);
  try {
    io.out.line(oneLine((await findSession(store, ref)).location));
  } finally {
    await store.close();
  }
  return EXIT_OK;
}
