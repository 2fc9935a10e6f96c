/**
 * `dsh log import FILE [-o OUT.jsonl]`: another agent's log written as dsh logs. Every session
 * the file holds is written (a transcript's sidechains beside the main one, as
 * `OUT.<key>.jsonl`), or only `FILE#key`'s. What had no dsh event is reported per field.
 */
import { encodeJsonl } from '../../session/index.js';
import { CliError, EXIT_OK } from '../errors.js';
import type { Io } from '../output.js';
import { readLog, STDIN, type CliLog } from '../read-log.js';
import { resolveLogArg } from '../session-ref.js';
import { checkOut, sameFile, writeOut } from '../out-file.js';
import { oneLine, plural, safeJson } from '../text.js';
import { splitSessionKey } from '../../import/index.js';

export interface ImportOptions {
  out?: string;
  json?: boolean;
}

/** Where a session of the file goes: the main one to OUT, each other one beside it. */
function outPath(out: string, key: string, first: boolean): string {
  if (first) return out;
  const safe = key.replace(/[^A-Za-z0-9._-]/g, '_');
  return out.endsWith('.jsonl') ? `${out.slice(0, -'.jsonl'.length)}.${safe}.jsonl` : `${out}.${safe}.jsonl`;
}

export async function runImport(arg: string, opts: ImportOptions, io: Io): Promise<number> {
  const path = await resolveLogArg(arg, io.env);
  const { key } = splitSessionKey(path);
  if (opts.out !== undefined) {
    if (path !== STDIN && sameFile(opts.out, splitSessionKey(path).path))
      throw new CliError('USAGE', '-o names the file being imported; write the dsh log somewhere else');
    checkOut(opts.out, 'the imported log');
  }
  const first = await readLog(path);
  if (!first.imported) throw new CliError('USAGE', `${oneLine(first.file)} is already a dsh session log; there is nothing to import`);
  // The whole file's sessions, unless one was named.
  const logs: CliLog[] = [first];
  if (key === undefined) for (const s of first.imported.siblings.slice(1)) logs.push(await readLog(`${path}#${s.key}`));
  if (opts.out === undefined && logs.length > 1 && !opts.json) {
    io.err.line(
      `note: ${oneLine(first.file)} holds ${logs.length} sessions; standard output gets the first (write them all with -o, or ` +
        'name one as FILE#key)',
    );
  }

  const written: {
    key: string;
    id: string;
    out: string | null;
    events: number;
    turns: number;
    messages: number;
    losses: { field: string; count: number; why: string }[];
  }[] = [];
  logs.forEach((log, i) => {
    const text = encodeJsonl(log.header, log.session.events.slice(0, log.eventCount));
    const target = opts.out === undefined ? null : outPath(opts.out, log.imported!.key, i === 0);
    if (target !== null) writeOut(target, text, 'the imported log');
    else if (i === 0 && !opts.json) io.out.write(text);
    let turns = 0;
    for (const e of log.session.events) if (e.type === 'turn/start') turns++;
    written.push({
      key: log.imported!.key,
      id: log.header.id,
      out: target,
      events: log.eventCount,
      turns,
      messages: log.session.deriveMessages().length,
      losses: log.imported!.losses.map((l) => ({ field: l.field, count: l.count, why: l.why })),
    });
  });

  if (opts.json) {
    io.out.line(safeJson({ file: first.file, format: first.imported.format, sessions: written }, 2));
    return EXIT_OK;
  }
  const err = io.err;
  err.line(`${oneLine(first.file)}: ${first.imported.format.label}, ${plural(written.length, 'session')}`);
  for (const w of written) {
    err.line(
      `  ${oneLine(w.key)} (${oneLine(w.id)}): ${plural(w.events, 'event')} · ${plural(w.turns, 'turn')} · ` +
        `${plural(w.messages, 'message')}${w.out !== null ? ` → ${oneLine(w.out)}` : ''}`,
    );
    if (w.losses.length === 0) err.line('    nothing lost');
    for (const l of w.losses) err.line(`    lost ${l.count} × ${oneLine(l.field)}: ${oneLine(l.why)}`);
  }
  return EXIT_OK;
}
