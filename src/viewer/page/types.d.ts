// Types the page's scripts share, for the type check only (JSDoc `@import`s erase at run time, so
// the viewer never serves this file).

/**
 * What `h` takes as children: nodes, strings and numbers (as text), nothing (null, undefined,
 * false), or arrays of these.
 */
export type Kid = Node | string | number | null | undefined | false | Kid[];

// The JSON the viewer's API sends, as the server declares it (src/viewer/model/views.ts, which
// imports nothing but its Text type, so this check reads no server code beyond the shapes).
export type {
  ApiAnswers,
  ApiRoute,
  BlockView,
  CallView,
  ChainLinkView,
  EditDiffView,
  EventRefView,
  ProvenanceView,
  RoundTripView,
  SessionsSearchView,
  StatsView,
  EndReason,
  GrowMessage,
  HistoryView,
  Item,
  ItemsPage,
  LocateView,
  SegmentsPage,
  SessionView,
  MessageView,
  SearchMatch,
  SegmentView,
  SourceView,
  StepPage,
  StepView,
  StreamView,
  Text,
  ToolResultView,
  TurnPage,
  TurnPart,
  TurnView,
  OutsideView,
  Usage,
} from '../model/views.js';

import type { Item, OutsideView, StepView, TurnView } from '../model/views.js';

/** What a "more" row loads when opened: the next page of a step's, a turn's or an outside run's items. */
export type MoreAction =
  | { type: 'step'; seg: number; step: number; from: number }
  | { type: 'parts'; seg: number; from: number; remaining: number }
  | { type: 'outside'; seg: number; from: number; to: number | undefined };

/** A row of the timeline (timeline.js), as the virtual list (vlist.js) holds and draws it. */
export type Row = { key: string; depth: number; seg: number; ver: number } & (
  | { kind: 'placeholder' }
  | { kind: 'turn'; data: TurnView; open: boolean }
  | { kind: 'outside'; data: OutsideView; open: boolean }
  | { kind: 'step'; step: number; data: StepView; open: boolean; needsItems?: boolean }
  | { kind: 'item'; step: number | undefined; data: Item }
  | { kind: 'more'; step: number | undefined; action: MoreAction }
);
