/**
 * The JSON the viewer's API sends (the page's only input). Every string from the log is in a
 * field the page renders as text; lengths are capped (`Text.total` tells what was left out).
 */
import type { Text } from './text.js';

export type { Text };

export interface Usage {
  /** Assistant messages that carried usage. */
  messages: number;
  /** Input tokens excluding cache reads and writes (the log's own, disjoint, kind). */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** Part of `output`. */
  reasoning: number;
}

export interface EndReason {
  kind: string;
  /** Failure code, cancel cause, … */
  detail?: string;
  message?: Text;
}

export interface StepView {
  step: number;
  start: number;
  end?: number;
  durationMs?: number;
  events: number;
  chunks: number;
  toolCalls: number;
  toolErrors: number;
  retries: number;
  usage: Usage;
  finish?: string;
}

export interface TurnView {
  kind: 'turn';
  index: number;
  turn: number;
  start: number;
  end?: number;
  durationMs?: number;
  events: number;
  steps: number;
  toolCalls: number;
  toolErrors: number;
  retries: number;
  usage: Usage;
  reason?: EndReason;
  prompt?: Text;
  model?: string;
}

export interface OutsideView {
  kind: 'outside';
  index: number;
  start: number;
  end: number;
  events: number;
  /** The events as items, when there are only a few. */
  items?: Item[];
}

export type SegmentView = TurnView | OutsideView;

export interface SourceView {
  kind: string;
  /** Plugin name, provider/model, or tool call id. */
  name?: string;
  form?: string;
}

export type BlockView =
  | { type: 'text' | 'reasoning'; text: Text }
  | { type: 'tool-call'; id: string; name: string; args: Text }
  | { type: 'tool-result'; callId: string; isError: boolean; content: BlockView[] }
  | { type: 'image'; ref: string }
  | { type: 'other'; json: Text };

export interface StreamView {
  first: number;
  last: number;
  chunks: number;
  /** Delta counts per block kind (`text`, `reasoning`, `tool-call`). */
  deltas: Record<string, number>;
  blocks: number;
  usage: number;
  finish?: string;
  finishMessage?: Text;
  /** Chunk types outside the stream grammar, counted. */
  other?: Record<string, number>;
}

export interface ToolResultView {
  seq: number;
  status: 'ok' | 'error';
  code?: string;
  durationMs: number;
  content: BlockView[];
}

interface ItemBase {
  /** First seq the item covers. */
  seq: number;
  /** Last seq it covers, when more than one. */
  last?: number;
  /** `{op:'replace'}` surface events: the seqs they replace. */
  replaces?: [number, number];
}

export type Item = ItemBase &
  (
    | { kind: 'user'; source: SourceView; blocks: BlockView[]; id: string }
    | {
        kind: 'assistant';
        source: SourceView;
        stream?: StreamView;
        usage?: Record<string, number>;
        interrupted?: boolean;
        empty?: boolean;
        blocks: BlockView[];
      }
    | { kind: 'stream'; stream: StreamView }
    | { kind: 'tool'; name: string; callId: string; args: Text; result?: ToolResultView }
    | { kind: 'result'; callId: string; name?: string; status: 'ok' | 'error'; code?: string; content: BlockView[] }
    | {
        kind: 'header';
        provider: string;
        model: string;
        reason: string;
        details: string[];
        changed: string[];
        tools: string[];
        toolCount: number;
        system?: Text;
      }
    | { kind: 'context'; provider: string; model: string; window?: number }
    | { kind: 'retry'; retry: string; mode: string; delayMs: number; failure: string; message?: Text }
    | { kind: 'retry-started'; retry: string }
    | { kind: 'inbox'; target: string; at: string; removed: number; inserted: number; preview?: Text; outcome?: string }
    | { kind: 'todo'; todos: { status: string; content: Text }[] }
    | { kind: 'turn-end'; turn: number; reason: EndReason }
    | { kind: 'seed-end'; inherited: number; from: 'fork'; parent: string }
    | { kind: 'seed-end'; inherited: number; from: 'resume' }
    | { kind: 'event'; type: string; ignorable: boolean; payload: Text; tone?: 'warn' }
  );

export interface ItemsPage {
  items: Item[];
  /** Seq to ask from for the next page; absent at the end of the range. */
  next?: number;
}

export interface TurnPartItem {
  kind: 'item';
  item: Item;
}
export interface TurnPartStep {
  kind: 'step';
  step: StepView;
  /** The step's items, when it is small enough to send with the turn. */
  items?: Item[];
  next?: number;
}
export type TurnPart = TurnPartItem | TurnPartStep;

export interface MessageView {
  index: number;
  seq: number;
  id: string;
  role: string;
  source: SourceView;
  blocks: BlockView[];
}

export interface HistoryView {
  seq: number;
  at: { type: string; turn?: number; step?: number };
  total: number;
  from: number;
  messages: MessageView[];
}

export interface SearchMatch {
  seq: number;
  type: string;
  turn?: number;
  step?: number;
  before: string;
  match: string;
  after: string;
}

/**
 * The `session` answer: the header's fields the page shows, the index's totals, whether the log is
 * still followed, and the loader's warnings. Structural copies of the source's types (views.ts
 * imports nothing but Text, so the page's check reads no server code), held to them by the
 * server's `session()`, which returns this type.
 */
export interface SessionView {
  /** The file path, the database location, or the session id. */
  label: string;
  kind: 'file' | 'session' | 'postgres';
  header: {
    id: string;
    createdAt: number;
    cwd?: string;
    parentSession?: string;
    origin?: string;
    agentPreset?: string;
    seedLength?: number;
    delegationDepth?: number;
  };
  events: number;
  segments: number;
  turns: number;
  steps: number;
  toolCalls: number;
  toolErrors: number;
  retries: number;
  usage: Usage;
  lastTime: number | undefined;
  follow: { state: 'following' | 'stopped'; problem?: { code: string; message: string }; pendingBytes?: number };
  warningCount: number;
  warnings: { code: string; message: string; line?: number }[];
}

/** The `segments` answer: a page of segment summaries. */
export interface SegmentsPage {
  total: number;
  from: number;
  segments: SegmentView[];
}

/** The `turn` answer: a turn's summary and a page of its parts (loose items and steps). */
export interface TurnPage {
  turn: SegmentView;
  total: number;
  from: number;
  parts: TurnPart[];
}

/** The `step` answer: a step's summary and a page of its items. */
export interface StepPage extends ItemsPage {
  step: StepView;
}

/** The `locate` answer: where an event is (its segment, and its turn and step inside a turn). */
export interface LocateView {
  seq: number;
  type: string;
  segment: number;
  turn?: number;
  step?: number;
}

/** The `grow` message of `api/follow`: the log's size now, the segments that changed, its follow state. */
export interface GrowMessage {
  events: number;
  segments: number;
  changed: number[];
  follow: SessionView['follow'];
}

/** The `event` answer: one event as indented JSON (cut past a few megabytes). */
export interface EventView {
  seq: number;
  json: Text;
}

/** The `search` answer: a page of matches in this log. */
export interface SearchPage {
  q: string;
  matches: SearchMatch[];
  /** Seq to ask from for the next page; absent at the end of the log. */
  next?: number;
}

// The inspector's answers (model/inspect.ts): the query layer's (src/query) shapes, copied here
// because the page's check must not read server code. Each copy is a supertype of the query
// layer's type: the server's route table (api.ts) returns the query's values as these types, so
// a field renamed or retyped there fails the server's type check, not the page at run time.

/** A short reference to an event (src/query/input.ts `EventRef`). */
export interface EventRefView {
  seq: number;
  type: string;
  time: number;
  turn?: number;
  step?: number;
}

/** A hunk of a unified diff (src/query/edit-diffs.ts `DiffHunk`). */
export interface DiffHunkView {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Each line starts with ` ` (kept), `+` (added), `-` (removed) or `\` (a note). */
  lines: string[];
}

/** An edit's or a write's diff, built from the recorded arguments (src/query/edit-diffs.ts `EditDiff`). */
export interface EditDiffView {
  path: string;
  kind: 'edit' | 'write';
  hunks: DiffHunkView[];
  tooLarge?: true;
}

/** One round trip of a tool call (src/query/call.ts `CallRoundTrip`) with its edit/write diffs. */
export interface RoundTripView {
  callId: string;
  name: string | undefined;
  turn: number | undefined;
  step: number | undefined;
  issuedBy?: { message: EventRefView; block: number; name: string; arguments: string; chunks: number[] };
  call?: EventRefView & { arguments: string };
  hooks: {
    invoked?: EventRefView & { point?: string; handlerId?: string; matcher?: string };
    result?: EventRefView & { point?: string; handlerId?: string; decision?: string; exitCode?: number; summary?: string };
    attribution: 'exact' | 'overlapping';
  }[];
  approvals: { id: string; asked: EventRefView & { toolName?: string; reason?: string }; decided?: EventRefView & { outcome?: string } }[];
  result?: { event: EventRefView; isError: boolean; error?: { name?: string; code?: string }; replacedBy: EventRefView[] };
  state: 'answered' | 'unanswered' | 'not-started';
  timings: { argumentsStreamMs?: number; dispatchMs?: number; durationMs?: number; totalMs?: number };
  diffs: EditDiffView[];
}

/** The `call` answer: the round trips that carry a call id (ids repeat across steps), the first 50. */
export interface CallView {
  callId: string;
  /** Round trips in the log; more than `trips.length` when cut. */
  total: number;
  trips: RoundTripView[];
}

/** A link of a replacement chain (src/query/provenance.ts `ChainLink`). */
export interface ChainLinkView extends EventRefView {
  depth: number;
  via: number;
}

/** The `provenance` answer (src/query/provenance.ts `Provenance`). */
export interface ProvenanceView {
  event: EventRefView;
  cites: EventRefView[];
  citedBy: EventRefView[];
  replaces: EventRefView[];
  replacedBy?: EventRefView;
  chainBack: ChainLinkView[];
  chainForward: ChainLinkView[];
  surface: 'visible' | 'shadowed' | 'not-surface';
  related: (EventRefView & { relation: 'issued-by' | 'issued' | 'compaction' | 'prune' | 'describes' })[];
}

/**
 * The `stats` answer: a session's totals (src/query/stats.ts `SessionStats`, without the per-turn
 * rows) and its alerts (src/query/alerts.ts `Alert`). Only the fields the page draws are copied.
 */
export interface StatsView {
  stats: {
    turns: number;
    steps: number;
    toolCalls: number;
    toolFailures: number;
    writer: { state: 'live' | 'none' | 'unknown' };
    /** Turns by end reason, plus `live` and `dangling` for open turns. */
    reasons: Record<string, number>;
    tokens: {
      calls: number;
      input: number;
      inputWithCache: number;
      cacheRead: number;
      cacheWrite: number;
      output: number;
      reasoning: number;
      cacheHitRatio: number | null;
    };
    cost: {
      byCurrency: Record<string, number>;
      pricedCalls: number;
      unpricedCalls: number;
      /** `model` is `provider:model` as recorded (`?` where the log names none). */
      unpriced: { model: string; calls: number; reason: string; message: string }[];
    };
    tools: { name: string; calls: number; failures: number; unanswered: number }[];
  };
  alerts: { kind: string; turn?: number; seq: number; callId?: string; message: string }[];
}

/** The `sessions-search` answer: hits across the store's sessions; `here` marks this session's. */
export interface SessionsSearchView {
  q: string;
  /** `rank`; over 5,000 matching texts, `rank-newest` (the best of the newest) or `newest`. */
  order: 'rank' | 'rank-newest' | 'newest';
  hits: {
    session: string;
    here: boolean;
    turn: number | null;
    seq: number;
    kind: string;
    snippet: string;
    /** Where the first query term is in the snippet (UTF-16 offsets). */
    match?: [number, number];
  }[];
}

/**
 * Every route of the API (`api/<route>`) and its answer. The server's route table (api.ts) is
 * typed by it, and the page's `api()` returns the answer of the route it names.
 */
export interface ApiAnswers {
  session: SessionView;
  segments: SegmentsPage;
  turn: TurnPage;
  step: StepPage;
  items: ItemsPage;
  event: EventView;
  history: HistoryView;
  search: SearchPage;
  locate: LocateView;
  call: CallView;
  provenance: ProvenanceView;
  stats: StatsView;
  'sessions-search': SessionsSearchView;
}

export type ApiRoute = keyof ApiAnswers;
