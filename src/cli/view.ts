/**
 * `dsh view`: the timeline viewer (src/viewer) on 127.0.0.1 for one log or stored session. It
 * follows the file (or, for a session in PostgreSQL, its rows, written on any host), so a session
 * still being written shows up as it grows. Runs until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { startViewer, type ViewerSource } from '../viewer/index.js';
import type { Session } from '../session/index.js';
import type { Io } from './output.js';
import { resolveSessionArg } from './session-ref.js';
import { CliError, EXIT_OK } from './errors.js';
import { oneLine } from './text.js';
import { checkLogFile, detectFile, readLog, STDIN } from './read-log.js';
import { splitSessionKey } from '../import/index.js';
import { existsSync } from 'node:fs';
import { storeChoice } from './store.js';
import { indexPath } from './home.js';

export interface ViewOptions {
  port?: number;
  host?: string;
  open?: boolean;
  /** Open the page at this seq (a search hit). */
  seq?: number;
}

/** Best effort: a missing opener is not an error (the URL is printed either way). */
function openInBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no opener on this machine
  }
}

export async function runView(arg: string, opts: ViewOptions, io: Io, until: Promise<unknown> = waitForSignal()): Promise<number> {
  if (arg === STDIN)
    throw new CliError('USAGE', 'dsh view follows a file as it grows, so it cannot read standard input; save the log to a file first');
  const target = await resolveSessionArg(arg, io.env);
  let source: ViewerSource;
  if ('store' in target) source = { sessionId: target.id, store: target.store };
  else {
    const path = target.path;
    const split = existsSync(path) ? { path, key: undefined } : splitSessionKey(path);
    // The file-level refusals every other command makes, in the same words, before a server starts.
    checkLogFile(split.path);
    // Another agent's log is mapped once and shown as a session (not followed: it is re-read on reload).
    const foreign = split.key !== undefined || (await detectFile(split.path)).kind !== 'dsh';
    source = foreign ? (await readLog(path)).session : path;
    if (foreign) io.err.line(`${oneLine(path)} is another agent's log: shown as imported now (reload the viewer to read it again)`);
    if (opts.seq !== undefined && foreign) {
      const length = (source as Session).length;
      if (opts.seq >= length) throw new CliError('SEQ_OUT_OF_RANGE', `--seq ${opts.seq}: the log has seqs 0 to ${length - 1}`);
    }
  }
  let viewer: Awaited<ReturnType<typeof startViewer>>;
  try {
    viewer = await startViewer({
      source,
      ...(await sessionsFor(io.env)),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.port !== undefined ? { port: opts.port } : {}),
    });
  } catch (e) {
    if ('store' in target) await target.store.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (opts.port !== undefined && (code === 'EADDRINUSE' || code === 'EACCES')) {
      const why = code === 'EADDRINUSE' ? 'is in use' : 'needs privileges to listen on';
      throw new CliError(
        'PORT_UNAVAILABLE',
        `--port ${opts.port}: 127.0.0.1:${opts.port} ${why}; pick another port, or leave --port out for any free one`,
        { cause: e },
      );
    }
    throw e;
  }
  // A seq past the end is refused here, in the words of the other commands, not only in the page.
  if (opts.seq !== undefined && viewer.events() <= opts.seq) {
    const length = viewer.events();
    await viewer.close();
    if ('store' in target) await target.store.close();
    throw new CliError('SEQ_OUT_OF_RANGE', `--seq ${opts.seq}: the log has seqs 0 to ${length - 1}`);
  }
  const url = opts.seq !== undefined ? `${viewer.url}#seq=${opts.seq}` : viewer.url;
  io.out.line(url);
  io.out.flush();
  io.err.line('viewing on 127.0.0.1 only; the address holds a one-time token. Ctrl-C stops the viewer.');
  io.err.flush();
  if (opts.open) openInBrowser(url);
  try {
    await until;
  } finally {
    await viewer.close();
    if ('store' in target) await target.store.close();
  }
  return EXIT_OK;
}

export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

/** The page searches across sessions in the JSONL store (`api/sessions-search`); not on PostgreSQL. */
async function sessionsFor(env: NodeJS.ProcessEnv): Promise<{ sessions?: { root: string; index: string } }> {
  const choice = await storeChoice(env);
  return choice.kind === 'jsonl' ? { sessions: { root: choice.root, index: indexPath(env) } } : {};
}
