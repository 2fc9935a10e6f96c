/**
 * `dsh log show --follow`: the timeline, then every event as it is appended, until Ctrl-C. The
 * log is followed through the viewer's sources: a file another process writes (its size polled),
 * or a session in PostgreSQL written on any host (LISTEN/NOTIFY plus reads by seq, so no event is
 * skipped or repeated). A run of stream chunks is printed once it is over, as one line.
 */
import { openSource, type ViewerSource } from '../../viewer/source/open.js';
import type { LogSource } from '../../viewer/source/source.js';
import type { SessionEvent } from '../../session/index.js';
import { CliError, EXIT_OK, EXIT_PROBLEM } from '../errors.js';
import { DEFAULT_WIDTHS, FULL_WIDTHS } from '../format.js';
import type { Io } from '../output.js';
import { checkLogFile, STDIN } from '../read-log.js';
import { resolveSessionArg } from '../session-ref.js';
import { oneLine } from '../text.js';
import { waitForSignal } from '../view.js';
import { renderEntries, type ShowOptions } from './show.js';
import { buildTimeline, type Entry } from './timeline.js';

export async function runShowFollow(arg: string, opts: ShowOptions, io: Io, until: Promise<unknown> = waitForSignal()): Promise<number> {
  if (arg === STDIN)
    throw new CliError('USAGE', '--follow reads a log as it grows, so it cannot read standard input; name the file or the session');
  if (opts.turn !== undefined) throw new CliError('USAGE', '--follow shows the whole log as it grows; --turn cannot be combined with it');
  const target = await resolveSessionArg(arg, io.env);
  if ('path' in target) checkLogFile(target.path);
  const source: ViewerSource = 'path' in target ? target.path : { sessionId: target.id, store: target.store };
  let src: LogSource;
  try {
    src = await openSource(source);
  } catch (e) {
    if ('store' in target) await target.store.close();
    throw e;
  }
  const widths = opts.full ? FULL_WIDTHS : DEFAULT_WIDTHS;
  const events: SessionEvent[] = [...src.since(0)];
  /** Every seq up to this one is printed. */
  let printed = -1;
  const flush = (): void => {
    const last = events.length - 1;
    const open = last >= 0 && events[last]!.type === 'assistant/chunk';
    const fresh: Entry[] = [];
    for (const e of buildTimeline(events, { widths, fileEventCount: events.length })) {
      const end = e.lastSeq ?? e.seq;
      if (end <= printed) continue;
      // A chunk run that reaches the end may still grow: print it once something follows it.
      if (open && end === last && e.lastSeq !== undefined) break;
      fresh.push(e);
      printed = end;
    }
    if (fresh.length > 0) renderEntries(fresh, io.out);
    io.out.flush();
  };
  io.err.line(`following ${oneLine(src.label)} (${events.length} events so far); Ctrl-C stops`);
  io.err.flush();
  flush();
  let stopped: (() => void) | undefined;
  const ended = new Promise<void>((r) => (stopped = r));
  const off = src.subscribe((batch) => {
    if (batch.length === 0) return stopped?.(); // the source stopped (why: src.follow())
    events.push(...batch);
    flush();
  });
  try {
    await Promise.race([until, ended]);
  } finally {
    off();
    src.close();
    if ('store' in target) await target.store.close();
  }
  const state = src.follow();
  if (state.state === 'stopped' && state.problem && state.problem.code !== 'CLOSED') {
    io.err.line(`dsh: ${oneLine(state.problem.message)} [${state.problem.code}]`);
    return EXIT_PROBLEM;
  }
  return EXIT_OK;
}
