/** The facts every command states about a loaded log (check's summary line, show's header). */
import type { CliLog } from './read-log.js';

export interface LogSummary {
  /** Events read from the file (packed rows expanded). */
  events: number;
  /** Storage rows after the header (a packed chunk row counts once). */
  rows: number;
  turns: number;
  steps: number;
  /** Messages in the derived model-visible history at the end of the log. */
  messages: number;
  /** Events crash repair appended to close a turn left open. */
  repairedEvents: number;
  tornTail: { line: number; droppedLines: number } | null;
}

export function summarize(log: CliLog): LogSummary {
  const session = log.session;
  // From the session's indexes: no pass over the log, and a loaded log's chunk runs are never
  // materialised.
  return {
    events: log.eventCount,
    rows: log.rowCount,
    turns: session.countOfType('turn/start'),
    steps: session.countOfType('step/start'),
    messages: session.messageCount(),
    repairedEvents: log.repaired.length,
    tornTail: log.tornTail ? { line: log.tornTail.line, droppedLines: log.tornTail.droppedLines } : null,
  };
}
