// @ts-check
// Numbers, durations and token usage as the page prints them.

const nf = new Intl.NumberFormat('en-US');

/**
 * Token sums as the index reports them; input excludes the cache.
 * @typedef {{ input: number, cacheRead: number, cacheWrite: number, output: number, reasoning: number }} Usage
 */

/** @param {number} n */
export function num(n) {
  return nf.format(n);
}

/**
 * 1234 → 1.2k, 2500000 → 2.5M: compact, for summary rows.
 * @param {number} n
 */
export function short(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + 'k';
  return (n / 1e6).toFixed(n < 1e7 ? 1 : 0) + 'M';
}

/**
 * @param {number} n
 * @param {string} word
 */
export function plural(n, word) {
  return num(n) + ' ' + word + (n === 1 ? '' : 's');
}

/** @param {number | null | undefined} ms */
export function duration(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
  const m = Math.floor(ms / 60000);
  return m + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

/**
 * Index usage sums ({input, cacheRead, cacheWrite, output, reasoning}; input excludes cache).
 * @param {Usage} u
 */
export function usageParts(u) {
  const incl = u.input + u.cacheRead + u.cacheWrite;
  const parts = ['in ' + short(incl)];
  if (u.cacheRead || u.cacheWrite) parts[0] += ' (' + short(u.input) + ' excl. cache)';
  parts.push('out ' + short(u.output) + (u.reasoning ? ' (' + short(u.reasoning) + ' reasoning)' : ''));
  return parts.join(' · ');
}

/** @param {Usage} u */
export function usageTitle(u) {
  return (
    'input incl. cache ' +
    num(u.input + u.cacheRead + u.cacheWrite) +
    '\ninput excl. cache ' +
    num(u.input) +
    '\ncache read ' +
    num(u.cacheRead) +
    '\ncache write ' +
    num(u.cacheWrite) +
    '\noutput ' +
    num(u.output) +
    '\nreasoning (part of output) ' +
    num(u.reasoning)
  );
}

/**
 * One message's usage as recorded ({input?, cacheRead?, cacheWrite?, output?, reasoning?}).
 * @param {Partial<Usage>} u
 */
export function messageUsage(u) {
  /** @param {keyof Usage} k */
  const z = (k) => u[k] || 0;
  return usageParts({
    input: z('input'),
    cacheRead: z('cacheRead'),
    cacheWrite: z('cacheWrite'),
    output: z('output'),
    reasoning: z('reasoning'),
  });
}

/** @param {unknown} ms epoch milliseconds; anything else prints as '' */
export function time(ms) {
  if (typeof ms !== 'number') return '';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}
