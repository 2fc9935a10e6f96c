/**
 * `dsh replay <log>`: run a recorded session again through the real agent loop, with no model
 * (the recorded streams are served back) and, by default, no tools (each call is answered with
 * its recorded result). Then compare the new log with the recording: what must match decides the
 * exit status (0 or 1), what may differ is reported, and what the replay did not re-enact is
 * listed (docs/replay.md).
 *
 * `--live-tools` runs the real built-in tools instead, in a workspace that must be named: the
 * recorded calls (writes, shell commands) really happen there, inside the default sandbox, and a
 * call that would need approval is refused as in any headless run.
 */
import { replaySession, type ReplayResult, type ReplaySessionOptions } from '../replay/harness.js';
import { encodeJsonl } from '../session/index.js';
import { codingTools } from '../tools/coding-tools.js';
import { permissions } from '../tools/permissions/plugin.js';
import type { Plugin } from '../agent/context.js';
import { CliError, EXIT_OK, EXIT_PROBLEM } from './errors.js';
import type { Io } from './output.js';
import { loadNotices, readLog, STDIN, type CliLog } from './read-log.js';
import { problemFromWarning } from './problems.js';
import { resolveLogArg } from './session-ref.js';
import { checkOut, sameFile, writeOut } from './out-file.js';
import { workspaceDir } from './workspace.js';
import { LiveRenderer } from './agent/render.js';
import { block, oneLine, plural, safeJson, truncate } from './text.js';

export interface ReplayOptions {
  liveTools?: boolean;
  cwd?: string;
  strict?: boolean;
  out?: string;
  json?: boolean;
}

function report(r: ReplayResult, opts: ReplayOptions, log: CliLog, ok: boolean): unknown {
  const { summary: _summary, ...comparison } = r.comparison;
  return {
    file: log.file,
    ok,
    matches: r.comparison.matches,
    strict: opts.strict === true,
    liveTools: opts.liveTools === true,
    out: opts.out ?? null,
    comparison,
    divergences: r.divergences.map((d) => ({
      turn: d.turn,
      step: d.step,
      attempt: d.attempt,
      field: d.field,
      path: d.path,
      message: d.message,
    })),
    unsupported: r.unsupported,
    notes: r.notes,
    /** The recorded turn the replay stopped before (it and the rest were not run), or null. */
    stoppedBefore: r.stoppedBefore ?? null,
    /** What loading the recording reported (a torn tail, crash repair, placeholders, …), as `dsh log check` lists it. */
    loadWarnings: log.warnings.map((w) => problemFromWarning(w, log.file)),
  };
}

function printSummary(r: ReplayResult, opts: ReplayOptions, ok: boolean, io: Io): void {
  const out = io.out;
  out.line();
  out.line(block(r.comparison.summary));
  if (r.divergences.length > 0) {
    out.line(
      `  requests: ${plural(r.divergences.length, 'live request')} differed from the recorded one` +
        `${opts.strict ? '' : ' (served anyway; --strict stops there)'}`,
    );
    for (const d of r.divergences.slice(0, 3)) out.line(`    - ${oneLine(truncate(d.message, 200))}`);
  }
  for (const u of r.unsupported) out.line(`  cannot replay faithfully: ${oneLine(u)}`);
  for (const n of r.notes) out.line(`  note: ${oneLine(n)}`);
  if (opts.out) out.line(`replayed log written to ${oneLine(opts.out)}`);
  const partial = r.stoppedBefore
    ? ` before turn ${r.stoppedBefore.turn} (turn ${r.stoppedBefore.turn} onwards cannot be replayed; see above)`
    : '';
  out.line(
    ok
      ? out.style('green', `replay: ok${partial}`)
      : out.style('red', `replay: FAILED${partial}${r.comparison.matches ? ' (--strict: live requests differed)' : ''}`),
  );
}

export async function runReplay(arg: string, opts: ReplayOptions, io: Io): Promise<number> {
  if (opts.liveTools && opts.cwd === undefined) {
    throw new CliError(
      'USAGE',
      '--live-tools runs the recorded tool calls for real (writes and shell commands included); name the workspace they run in ' +
        'with --cwd DIR',
    );
  }
  if (!opts.liveTools && opts.cwd !== undefined)
    throw new CliError('USAGE', '--cwd names the workspace for --live-tools; without it, no tool runs');
  const path = await resolveLogArg(arg, io.env);
  if (opts.out !== undefined && path !== STDIN && sameFile(opts.out, path)) {
    throw new CliError('USAGE', '--out names the recording itself; write the replayed log somewhere else');
  }
  if (opts.out !== undefined) checkOut(opts.out, 'the replayed log');
  // Loaded here rather than by the harness, so a log that does not load is named by its file.
  const loaded = await readLog(path);
  const recording = loaded.session;
  if (!opts.json) for (const n of loadNotices(loaded)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
  const cwd = opts.liveTools ? workspaceDir(opts.cwd) : process.cwd();

  const plugins: Plugin[] = [];
  if (!opts.json) {
    const renderer = new LiveRenderer(io, { mode: 'stream', echoPrompts: true });
    plugins.push((host) => renderer.attach(host.session));
  }
  const options: ReplaySessionOptions = { mode: opts.strict ? 'strict' : 'report', cwd, plugins };
  if (opts.liveTools) {
    options.tools = [];
    // The built-in tools in the default sandbox; nobody can approve, so what would ask is refused.
    plugins.unshift(codingTools(), permissions({ sandbox: 'workspace-write', approval: 'ask' }));
  }
  const r = await replaySession(recording, options);
  await r.agent.dispose();
  const ok = r.comparison.matches && !(opts.strict && r.divergences.length > 0);
  if (opts.out !== undefined) writeOut(opts.out, encodeJsonl(r.session.header, r.session.events), 'the replayed log');
  if (opts.json) io.out.line(safeJson(report(r, opts, loaded, ok), 2));
  else printSummary(r, opts, ok, io);
  return ok ? EXIT_OK : EXIT_PROBLEM;
}
