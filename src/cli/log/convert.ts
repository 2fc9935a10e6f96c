/**
 * `dsh log convert --to 0 FILE [-o OUT]`: a log of any format this build reads (dsh's formats
 * 0–4) written as a format 0 log, the format dsh writes by default. The file is loaded (and so
 * checked) as every log command loads it; what the conversion changed is reported on stderr.
 */
import { encodeJsonl } from '../../session/index.js';
import { CliError, EXIT_OK } from '../errors.js';
import type { Io } from '../output.js';
import { readLog, STDIN } from '../read-log.js';
import { resolveLogArg } from '../session-ref.js';
import { checkOut, sameFile, writeOut } from '../out-file.js';
import { oneLine, plural } from '../text.js';

export interface ConvertOptions {
  to: string;
  out?: string;
}

export async function runConvert(arg: string, opts: ConvertOptions, io: Io): Promise<number> {
  if (opts.to !== '0') throw new CliError('USAGE', `--to ${oneLine(opts.to)}: this build writes session format 0 only`);
  const path = await resolveLogArg(arg, io.env);
  if (opts.out !== undefined) {
    if (path !== STDIN && sameFile(opts.out, path))
      throw new CliError('USAGE', '-o names the file being converted; write the format 0 log somewhere else');
    checkOut(opts.out, 'the converted log');
  }
  const log = await readLog(path);
  if (log.imported) throw new CliError('USAGE', `${oneLine(log.file)} is ${log.imported.format.label}, not a dsh log; use dsh log import`);
  // What the file holds: not the closers crash repair adds in memory, nor the end-of-seed marker.
  const text = encodeJsonl(log.header, log.session.events.slice(0, log.eventCount));
  if (opts.out !== undefined) writeOut(opts.out, text, 'the converted log');
  else io.out.write(text);
  const notes = log.warnings.filter((w) => w.code === 'FORMAT_CONVERTED' || w.code === 'TORN_TAIL');
  io.err.line(
    `${oneLine(log.file)}: ${plural(log.eventCount, 'event')} written as format 0` +
      `${opts.out !== undefined ? ` → ${oneLine(opts.out)}` : ''}`,
  );
  for (const w of notes) io.err.line(`  ${oneLine(w.message)}`);
  return EXIT_OK;
}
