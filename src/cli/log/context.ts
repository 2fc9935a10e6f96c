/**
 * What the query commands share: the price table from the config, who writes a log now, and
 * query refusals as CLI errors (a turn, call or seq the log does not have is a usage error, exit
 * 2, as `--turn` and `--at` already are).
 */
// config.js, not the config index: the index re-exports the zod schema, loaded only with a config file.
import { ConfigError, loadConfig } from '../../config/config.js';
import { PriceTable } from '../../llm/pricing.js';
// Leaf modules, not the query index: dsh log check reads a log's writer without the query layer.
import { QueryError } from '../../query/errors.js';
import type { WriterState } from '../../query/stats.js';
import { writerOf } from '../../query/writer.js';
import { CliError } from '../errors.js';
import type { Io } from '../output.js';
import { STDIN } from '../read-log.js';
import { oneLine } from '../text.js';

/**
 * The config's `prices` over DeepSeek's defaults. A config file that does not load costs the
 * command nothing but its prices: the defaults are used and a warning says why.
 */
export async function pricesFor(io: Io): Promise<PriceTable> {
  try {
    const { config } = await loadConfig({ env: io.env });
    return new PriceTable({ config: config.prices });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.err.line(
      `${io.err.style('yellow', 'warning')}: prices from the config were not read (${oneLine(e.message)} [${e.code}]); using the ` +
        'default prices',
    );
    return new PriceTable();
  }
}

/** The writer of a log file (standard input has none to ask). */
export function writerFor(path: string): WriterState {
  return path === STDIN ? { state: 'unknown' } : writerOf(path);
}

/** Run a query; its refusal becomes the CLI's one-line error naming the file. */
export function query<T>(file: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof QueryError && e.code !== 'INVALID_INPUT') throw new CliError(e.code, e.message, { file, cause: e });
    throw e;
  }
}
