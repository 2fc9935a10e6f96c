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
