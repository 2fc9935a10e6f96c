/**
 * The viewer's JSON API: what each route returns, from the source, the index and the models.
 * Every list is paged; nothing returns the whole log. Parameters are strict (decimal integers
 * in range); anything else is a BAD_REQUEST, a seq or segment the log lacks is NOT_FOUND.
 */
import { ViewerError } from './errors.js';
import { HistoryCache } from './model/history.js';
import { callView, provenanceView, statsView, type StatsCache } from './model/inspect.js';
import { FULL_CAPS, PREVIEW_CAPS, buildItems } from './model/items.js';
import type { LogIndex } from './model/log-index.js';
import { search } from './model/search.js';
import { segmentView, stepView, turnParts } from './model/segments.js';
import { cap, printJson } from './model/text.js';
import type { LogSource } from './source/source.js';
import type { ApiAnswers, ApiRoute, LocateView, SessionView, SessionsSearchView } from './model/views.js';
import { search as searchSessions } from '../search/search.js';
import type { SearchHit } from '../search/search.js';

/** Where search across sessions looks: the JSONL store's root and its search index. */
export interface SessionsSearch {
  root: string;
  index: string;
}

const MAX_PAGE = 1000;
const MAX_QUERY = 500;
/** The raw view of one event is for reading, not for downloading a log: past this it is cut. */
const RAW_EVENT_CAP = 32 << 20;

function int(params: URLSearchParams, name: string, dflt?: number): number {
  const raw = params.get(name);
  if (raw === null || raw === '') {
    if (dflt !== undefined) return dflt;
    throw new ViewerError('BAD_REQUEST', `missing parameter ${name}`);
  }
  if (!/^\d{1,15}$/.test(raw)) throw new ViewerError('BAD_REQUEST', `parameter ${name} must be a non-negative integer`);
  return Number(raw);
}

function limitOf(params: URLSearchParams, dflt: number): number {
  return Math.max(1, Math.min(MAX_PAGE, int(params, 'limit', dflt)));
}

export class ViewerApi {
  private readonly history: HistoryCache;
  private readonly statsCache: StatsCache = {};

  constructor(
    private readonly src: LogSource,
    private readonly index: LogIndex,
    private readonly sessions?: SessionsSearch,
  ) {
    this.history = new HistoryCache(src, index);
  }

  private seqParam(params: URLSearchParams, name = 'seq'): number {
    const seq = int(params, name);
    if (seq >= this.index.length) throw new ViewerError('NOT_FOUND', `the log has no seq ${seq} (it has ${this.index.length} events)`);
    return seq;
  }

  /**
   * Each route's answer, typed by `ApiAnswers` (model/views.ts), the shapes the page reads: a route
   * missing here, or an answer that drifts from its type, fails the type check.
   */
  private readonly routes: { readonly [R in ApiRoute]: (params: URLSearchParams) => ApiAnswers[R] } = {
    session: () => this.session(),
    segments: (params) => {
      const from = int(params, 'from', 0);
      const limit = limitOf(params, 100);
      const segs = this.index.segments.slice(from, from + limit);
      return {
        total: this.index.segments.length,
        from,
        segments: segs.map((s) => segmentView(s, this.src, this.index, PREVIEW_CAPS)),
      };
    },
    turn: (params) => {
      const i = int(params, 'segment');
      const seg = this.index.segments[i];
      if (seg?.kind !== 'turn') throw new ViewerError('NOT_FOUND', `segment ${i} is not a turn`);
      const from = int(params, 'from', 0);
      const { total, parts } = turnParts(seg, this.src, this.index, from, limitOf(params, 200), PREVIEW_CAPS);
      return { turn: segmentView(seg, this.src, this.index, PREVIEW_CAPS), total, from, parts };
    },
    step: (params) => {
      const i = int(params, 'segment');
      const seg = this.index.segments[i];
      const k = int(params, 'step');
      const step = seg?.kind === 'turn' ? seg.steps.find((s) => s.step === k) : undefined;
      if (!seg || !step) throw new ViewerError('NOT_FOUND', `segment ${i} has no step ${k}`);
      const end = this.index.stepEnd(step);
      const from = Math.max(step.start, int(params, 'from', step.start));
      return {
        step: stepView(step, this.index),
        ...buildItems(this.src, this.index, from, end, { limit: limitOf(params, 200), caps: PREVIEW_CAPS }),
      };
    },
    items: (params) => {
      const from = this.seqParam(params, 'from');
      const to = Math.min(int(params, 'to', this.index.length - 1), this.index.length - 1);
      // Whole texts are for one item at a time (the page's "show all"), or an answer could be gigabytes.
      const full = params.get('full') === '1';
      return buildItems(this.src, this.index, from, to, {
        limit: full ? 1 : limitOf(params, 200),
        caps: full ? FULL_CAPS : PREVIEW_CAPS,
      });
    },
    event: (params) => {
      const seq = this.seqParam(params);
      const text = printJson(this.src.at(seq), 2, RAW_EVENT_CAP);
      return { seq, json: cap(text, RAW_EVENT_CAP) };
    },
    history: (params) => this.history.view(this.seqParam(params), int(params, 'from', 0), limitOf(params, 100), PREVIEW_CAPS),
    search: (params) => {
      const q = params.get('q') ?? '';
      if (q.length === 0 || q.length > MAX_QUERY) throw new ViewerError('BAD_REQUEST', `q must be 1 to ${MAX_QUERY} characters`);
      return { q, ...search(this.src, this.index, q, int(params, 'from', 0), limitOf(params, 200)) };
    },
    locate: (params) => {
      const seq = this.seqParam(params);
      const where = this.index.locate(seq)!;
      const out: LocateView = { seq, type: this.src.at(seq).type.slice(0, 200), segment: where.segment.index };
      if (where.segment.kind === 'turn') out.turn = where.segment.turn;
      if (where.step) out.step = where.step.step;
      return out;
    },
    // The query layer's answers (src/query), run here so the page never re-implements them.
    call: (params) => {
      const id = params.get('id') ?? '';
      if (id.length === 0 || id.length > MAX_QUERY) throw new ViewerError('BAD_REQUEST', `id must be 1 to ${MAX_QUERY} characters`);
      return callView(this.src, id);
    },
    provenance: (params) => provenanceView(this.src, this.seqParam(params)),
    stats: () => statsView(this.src, this.statsCache),
    'sessions-search': (params) => this.sessionsSearch(params),
  };

  /** The JSON body for `route` (the path after `api/`). */
  handle(route: string, params: URLSearchParams): unknown {
    // An own key only: `toString` or `__proto__` is no route.
    if (!Object.prototype.hasOwnProperty.call(this.routes, route)) throw new ViewerError('NOT_FOUND', 'no such API route');
    return this.routes[route as ApiRoute](params);
  }

  /**
   * Full text across the store's sessions (src/search, the same as `dsh sessions search`). A hit
   * in the session shown is marked `here` (the page jumps to it); the others name their session.
   */
  private sessionsSearch(params: URLSearchParams): SessionsSearchView {
    const q = params.get('q') ?? '';
    if (q.length === 0 || q.length > MAX_QUERY) throw new ViewerError('BAD_REQUEST', `q must be 1 to ${MAX_QUERY} characters`);
    if (!this.sessions) throw new ViewerError('NOT_FOUND', 'search across sessions needs the session store (dsh view of a stored session)');
    let r;
    try {
      r = searchSessions(q, { ...this.sessions, limit: Math.min(100, limitOf(params, 30)) });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'BAD_QUERY') throw new ViewerError('BAD_REQUEST', (e as Error).message, { cause: e });
      throw e;
    }
    const id = String(this.src.header.id);
    const here = (h: SearchHit): boolean => h.format === 'dsh' && h.session === id && h.seq < this.index.length;
    return {
      q,
      order: r.order,
      hits: r.hits.map((h) => ({
        session: h.session.slice(0, 500),
        here: here(h),
        turn: h.turn,
        seq: h.seq,
        kind: h.kind,
        snippet: h.snippet,
        ...(h.match ? { match: h.match } : {}),
      })),
    };
  }

  session(): SessionView {
    const h = this.src.header;
    const header: SessionView['header'] = { id: String(h.id).slice(0, 500), createdAt: h.createdAt };
    for (const k of ['cwd', 'parentSession', 'origin', 'agentPreset'] as const)
      if (typeof h[k] === 'string') header[k] = (h[k] as string).slice(0, 2000);
    for (const k of ['seedLength', 'delegationDepth'] as const) if (typeof h[k] === 'number') header[k] = h[k];
    const ix = this.index;
    return {
      label: this.src.label.slice(0, 2000),
      kind: this.src.kind,
      header,
      events: ix.length,
      segments: ix.segments.length,
      turns: ix.turns,
      steps: ix.steps,
      toolCalls: ix.toolCalls,
      toolErrors: ix.toolErrors,
      retries: ix.retries,
      usage: ix.usage,
      lastTime: ix.lastTime,
      follow: this.src.follow(),
      warningCount: this.src.warnings.length,
      warnings: this.src.warnings.slice(0, 50).map((w) => ({ ...w, message: w.message.slice(0, 1000) })),
    };
  }
}
