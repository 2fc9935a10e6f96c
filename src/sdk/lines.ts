/**
 * Lines of a byte stream for a line protocol, with a cap: a line longer than `maxBytes` is not
 * kept in memory (its bytes are counted and dropped up to its end) and comes out as
 * `{oversized: bytes}`, so one huge line cannot exhaust the server and the next line is read
 * as usual. A `\r` before the `\n` is dropped; a last line without `\n` still counts. Lines are
 * decoded as UTF-8 (a character split across chunks is joined first).
 */
export type Line = string | { oversized: number };

export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export async function* readLines(input: AsyncIterable<Buffer | string>, maxBytes = MAX_LINE_BYTES): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let size = 0;
  let dropping = false;
  const finish = (): Line => {
    const out: Line = dropping ? { oversized: size } : Buffer.concat(parts).toString('utf8').replace(/\r$/, '');
    parts = [];
    size = 0;
    dropping = false;
    return out;
  };
  for await (const raw of input) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    for (;;) {
      const nl = chunk.indexOf(0x0a);
      const piece = nl < 0 ? chunk : chunk.subarray(0, nl);
      size += piece.length;
      if (!dropping && size > maxBytes) {
        dropping = true;
        parts = [];
      }
      if (!dropping) parts.push(piece);
      if (nl < 0) break;
      yield finish();
      chunk = chunk.subarray(nl + 1);
    }
  }
  if (size > 0 || dropping) yield finish();
}
