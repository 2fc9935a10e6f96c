/**
 * The CLI's buffered writer. Given a sink that takes bytes (stdout, stderr), it encodes lines as
 * UTF-8 into a buffer as they come instead of joining strings (issue 13 item 3: `dsh log show` of
 * a large log). What reaches the sink must be the very bytes the string path writes, in order:
 * lines, streamed text, lines too long for a buffer, a surrogate pair split across two writes,
 * flushes, and secrets redacted from the moment they are known.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { Output, processIo } from '../../src/cli/output.js';

type Op = { kind: 'line'; text: string } | { kind: 'write'; text: string } | { kind: 'flush' } | { kind: 'redact'; secret: string };

/** Runs `ops` on an Output over a recording sink; the bytes a stream would get, and the writes. */
function run(ops: readonly Op[], bytes: boolean): { out: Buffer; writes: number } {
  const parts: Buffer[] = [];
  const sink = {
    write: (s: string | Uint8Array): void => {
      // A Node stream encodes a string as UTF-8 (a lone surrogate as U+FFFD), each write alone.
      parts.push(typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s));
    },
  };
  const o = new Output(sink, false, bytes);
  for (const op of ops) {
    if (op.kind === 'line') o.line(op.text);
    else if (op.kind === 'write') o.write(op.text);
    else if (op.kind === 'flush') o.flush();
    else o.redact([op.secret]);
  }
  o.flush();
  return { out: Buffer.concat(parts), writes: parts.length };
}

// Pieces that exercise the encoder: ASCII, Latin-1, BMP, astral, and both halves of a pair alone.
const piece = fc.constantFrom('a', 'secret-token-1', ' ', 'é', '…', '×', '😀', '\ud83d', '\ude00', '\t', '\u001b[31m');
const text = fc.array(piece, { maxLength: 12 }).map((xs) => xs.join(''));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('line' as const), text }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), text }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'redact' as const, secret: 'secret-token-1' }) },
);

describe('Output over a byte sink', () => {
  it('writes the same bytes as over a string sink, for any sequence of lines, writes, flushes and redactions', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        expect(run(ops, true).out.equals(run(ops, false).out)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('joins a surrogate pair that two writes split, as the string path does', () => {
    const ops: Op[] = [
      { kind: 'line', text: 'before' },
      { kind: 'write', text: 'x\ud83d' },
      { kind: 'write', text: '\ude00y' },
      { kind: 'line', text: '' },
    ];
    const { out } = run(ops, true);
    expect(out.toString('utf8')).toBe('before\nx😀y\n');
  });

  it('keeps order around a line too long for one buffer, and buffers ~128 KiB per write', () => {
    const long = 'é'.repeat(100_000);
    const ops: Op[] = [
      { kind: 'line', text: 'one' },
      { kind: 'line', text: long },
      { kind: 'line', text: 'two' },
    ];
    expect(run(ops, true).out.toString('utf8')).toBe(`one\n${long}\ntwo\n`);
    const many: Op[] = Array.from({ length: 20_000 }, (_, i) => ({ kind: 'line' as const, text: `line ${i} ……` }));
    const { out, writes } = run(many, true);
    expect(out.equals(run(many, false).out)).toBe(true);
    // 20,000 lines of 14–20 UTF-8 bytes... in chunks of at most 128 KiB, not one write per line.
    expect(writes).toBeLessThan(10);
    expect(writes).toBeGreaterThan(1);
  });

  it('redacts a secret in text not yet written when redact() is called, and in text after it', () => {
    const ops: Op[] = [
      { kind: 'line', text: 'early secret-token-1' },
      { kind: 'redact', secret: 'secret-token-1' },
      { kind: 'line', text: 'late secret-token-1' },
      { kind: 'flush' },
      { kind: 'redact', secret: 'other-secret-2' },
      { kind: 'line', text: 'after a flush secret-token-1 other-secret-2' },
    ];
    expect(run(ops, true).out.toString('utf8')).toBe('early [REDACTED]\nlate [REDACTED]\nafter a flush [REDACTED] [REDACTED]\n');
  });
});

describe('processIo', () => {
  it("makes Node's stdin stream only when a command reads its input", () => {
    const stdin = vi.spyOn(process, 'stdin', 'get');
    try {
      const io = processIo();
      expect(stdin).not.toHaveBeenCalled();
      expect(io.stdin).toBe(process.stdin);
      expect(stdin).toHaveBeenCalled();
    } finally {
      stdin.mockRestore();
    }
  });
});
