/**
 * Logs a store already loaded (a database has no file to read), by the location they are named
 * by, for `readLog` to take instead of a file; and the name of standard input. Apart from
 * read-log.ts so that naming a session (session-ref.ts, `dsh sessions`) does not load the log
 * reader and the other agents' importers behind it.
 */
import type { LoadedLog } from '../session/index.js';

/** The argument that names standard input. */
export const STDIN = '-';

const loaded = new Map<string, LoadedLog>();

/** Make a stored session readable by `readLog(location)` (once). */
export function registerLoaded(location: string, log: LoadedLog): void {
  loaded.set(location, log);
}

/** The log registered under `location`, taken (a second read goes to the file). */
export function takeLoaded(location: string): LoadedLog | undefined {
  const log = loaded.get(location);
  if (log) loaded.delete(location);
  return log;
}
