/**
 * `MessageHistory` snapshots (issue 13 item 4): taking one is O(1) because it shares the
 * builder's append-only list, so what must hold is that a snapshot never sees a later push, reads
 * like the array it stands for (iteration, at, slice, toJSON and the array-like readers), and is
 * the same object until the list grows. Expected values come from a plain array kept beside it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HistoryBuilder, MessageHistory, messageArray, type Message } from '../../src/model/index.js';

const msg = (i: number): Message => ({ id: `m${i}`, role: 'user', content: [{ type: 'text', text: `t${i}` }], source: { kind: 'user' } });

describe('MessageHistory', () => {
  it('a snapshot keeps what it held while the builder grows, and reads like that array', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(5), { maxLength: 40 }),
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: -50, max: 50 }),
        (pushes, a, b) => {
          const builder = new HistoryBuilder();
          const mirror: Message[] = [];
          const held: [MessageHistory, Message[]][] = [];
          let n = 0;
          for (const k of pushes) {
            for (let j = 0; j < k; j++) {
              const m = msg(n++);
              builder.push(m);
              mirror.push(m);
            }
            const snap = builder.snapshot();
            // The same object until the next push.
            expect(builder.snapshot()).toBe(snap);
            held.push([snap, mirror.slice()]);
          }
          for (const [snap, was] of held) {
            expect(snap.length).toBe(was.length);
            expect([...snap]).toEqual(was);
            expect(snap.toArray()).toEqual(was);
            expect(snap.at(a)).toBe(was.at(a));
            expect(snap.slice(a, b)).toEqual(was.slice(a, b));
            expect(JSON.stringify(snap)).toBe(JSON.stringify(was));
            expect(snap.map((m, i) => `${m.id}:${i}`)).toEqual(was.map((m, i) => `${m.id}:${i}`));
            expect(snap.filter((_, i) => i % 2 === 0)).toEqual(was.filter((_, i) => i % 2 === 0));
            expect(snap.find((m) => m.id === 'm3')).toBe(was.find((m) => m.id === 'm3'));
            expect(messageArray(snap)).toEqual(was);
            expect(Object.isFrozen(snap)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('of() copies its input, and an empty history is the shared EMPTY', () => {
    const src = [msg(1), msg(2)];
    const h = MessageHistory.of(src);
    src.push(msg(3));
    expect(h.toArray()).toEqual([msg(1), msg(2)]);
    expect(MessageHistory.of([])).toBe(MessageHistory.EMPTY);
    expect(new HistoryBuilder().snapshot()).toBe(MessageHistory.EMPTY);
    // An array passes through messageArray as itself.
    expect(messageArray(src)).toBe(src);
  });
});
