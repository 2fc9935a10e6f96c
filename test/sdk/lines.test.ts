/** src/sdk/lines.ts: lines of a chunked byte stream, with oversized lines dropped and counted. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLines, type Line } from '../../src/sdk/lines.js';

async function collect(chunks: (Buffer | string)[], max?: number): Promise<Line[]> {
  const out: Line[] = [];
  async function* src() {
    yield* chunks;
  }
  for await (const l of readLines(src(), max)) out.push(l);
  return out;
}

/** Where each chunk ends, as cut points into the text's bytes. */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

describe('readLines', () => {
  it('property: any chunking gives the lines of the text (CR before LF dropped, a last line without LF kept)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 6 }), { maxLength: 6 }),
        fc.array(fc.nat()),
        async (ls, points) => {
          const clean = ls.map((l) => l.replace(/[\r\n]/g, ''));
          const text = clean.map((l, i) => `${l}${i % 2 ? '\r\n' : '\n'}`).join('');
          expect(await collect(cut(Buffer.from(text), points))).toEqual(clean);
        },
      ),
    );
  });

  it('drops a line over the cap, counts its bytes, and reads the next one', async () => {
    const long = 'x'.repeat(25);
    expect(await collect([`ok\n${long.slice(0, 10)}`, `${long.slice(10)}\nnext\n`], 20)).toEqual(['ok', { oversized: 25 }, 'next']);
    expect(await collect(['tail without newline'], 8)).toEqual([{ oversized: 20 }]);
    expect(await collect(['a\n', 'b'])).toEqual(['a', 'b']);
  });
});
