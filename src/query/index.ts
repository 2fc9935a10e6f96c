/**
 * The query layer: the session log read as a data plane (docs/data-plane.md). Pure functions over
 * events, for a live `Session`, a loaded log or a store's sessions: one turn's events, one tool
 * call's round trip, one event's provenance, and statistics (tokens, cost, times, reasons,
 * errors, tools) per step, turn, session and fleet, with the alerts they raise.
 */
export { QueryError, type QueryErrorCode, type QueryErrorDetails } from './errors.js';
export { viewOf, requireSeq, refOf, type QueryInput, type EventList, type EventReader, type LogView, type EventRef } from './input.js';
export { turnOf, turnNumbers, type TurnSlice, type StepSlice } from './turn.js';
export {
  callOf,
  roundTrips,
  callIds,
  nearestIds,
  type CallRoundTrip,
  type IssuedBy,
  type HookDecision,
  type ApprovalDecision,
  type CallResult,
  type CallTimings,
} from './call.js';
export { provenance, provenanceIn, type Provenance, type ChainLink, type RelatedRef } from './provenance.js';
export {
  stats,
  collectStats,
  StatsFold,
  type SessionStats,
  type Totals,
  type TurnStats,
  type StepStats,
  type Tokens,
  type Cost,
  type UnpricedModel,
  type ModelUse,
  type ToolStats,
  type CallRef,
  type ErrorsByCode,
  type TurnState,
  type WriterState,
  type StatsOptions,
  type StatsSamples,
} from './stats.js';
export { distOf, type Dist } from './dist.js';
export { alertsOf, isAlertKind, ALERT_KINDS, DEFAULT_ALERTS, type Alert, type AlertKind } from './alerts.js';
export { FleetFold, type FleetStats, type SessionRow } from './fleet.js';
export { writerOf } from './writer.js';
export { editDiffs, diffOf, type EditDiff, type DiffHunk } from './edit-diffs.js';
