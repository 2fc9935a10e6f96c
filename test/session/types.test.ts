/**
 * Issue 2 item 2 at the type level: `SessionEventMap` is merge-extensible, `switch (event.type)`
 * narrows `event.data` with no assertion, surface placement is required on the three surface
 * types and refused on others, wrong data shapes do not compile, and what the log hands out is
 * read-only. `npm test` type-checks this file before vitest runs it: a `@ts-expect-error` line
 * that stops being an error fails the type-check, so every rule here can fail.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/model/message.js';
import type { Session, SessionEvent } from '../../src/session/index.js';
import { newSession, openStep, userMsg } from './helpers.js';

declare module '../../src/session/events.js' {
  interface SessionEventMap {
    'types-test/ping': { n: number; label?: string };
  }
}

/** Narrowing by `type` alone: each branch reads fields only its own data has. */
function describeEvent(e: SessionEvent): string {
  switch (e.type) {
    case 'types-test/ping':
      return `ping ${e.data.n.toFixed(0)}${e.data.label ?? ''}`;
    case 'turn/start':
      return `turn ${e.data.turn}`;
    case 'user/message':
      return `user ${e.data.id} via ${e.surfaceOp === 'append' ? 'append' : 'replace'}`;
    case 'tool/result':
      return `result ${e.data.message.content.length}`;
    default:
      return e.type;
  }
}

/** Never called: the lines marked @ts-expect-error must not compile. */
// biome-ignore lint/suspicious/noExportsInTest: exported so it counts as used; only the compiler reads it
export function mustNotCompile(s: Session, e: SessionEvent, messages: readonly Message[]): void {
  if (e.type === 'turn/start') {
    // @ts-expect-error turn/start data has no `n`
    void e.data.n;
  }
  if (e.type === 'types-test/ping') {
    // @ts-expect-error `n` is a number, not a string
    const label: string = e.data.n;
    void label;
  }
  // @ts-expect-error a surface type without its placement
  s.append('user/message', userMsg('u'));
  // @ts-expect-error placement on a type that is not a surface type
  s.append('turn/start', { turn: 1 }, { surfaceOp: 'append' });
  // @ts-expect-error sourceEventSeqs on a type that is not a surface type
  s.append('step/start', { turn: 1, step: 1 }, { sourceEventSeqs: [0] });
  // @ts-expect-error the data of a known type has its shape
  s.append('turn/start', { turn: 'one' });
  // @ts-expect-error a merged type's data has its shape too
  s.append('types-test/ping', { n: 'x' });
  // @ts-expect-error an unknown type is not in the map
  s.append('types-test/unknown', {});
  // @ts-expect-error logged events are read-only
  e.seq = 3;
  // @ts-expect-error the events snapshot is read-only
  s.events.push(e);
  // @ts-expect-error the derived history is read-only
  messages.push(userMsg('x'));
}

describe('the event vocabulary as types', () => {
  it('a merged type appends with its own data type and narrows at run time as the types say', () => {
    const s = newSession();
    openStep(s, 1);
    const ping = s.append('types-test/ping', { n: 7, label: '!' });
    const n: number = ping.data.n; // typed from the merged map, no assertion
    expect(n).toBe(7);
    const u = s.append('user/message', userMsg('u1'), { surfaceOp: 'append' });
    expect(s.events.map(describeEvent).slice(-2)).toEqual(['ping 7!', 'user u1 via append']);
    expect(describeEvent(s.events[0]!)).toBe('turn 1');
    expect(u.surfaceOp).toBe('append');
    expect(typeof mustNotCompile).toBe('function');
  });
});
