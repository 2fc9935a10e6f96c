/** Deferred calls on a test's own clock: `advance(t)` runs, in order, those due by then. */
import type { Defer } from '../../../src/terminal/chat/approval.js';

export function manualDefer(now: () => number): { defer: Defer; advance(t: number): void } {
  let due: { at: number; fn: () => void; live: boolean }[] = [];
  return {
    defer: (fn, ms) => {
      const entry = { at: now() + ms, fn, live: true };
      due.push(entry);
      return () => (entry.live = false);
    },
    advance: (t) => {
      const ready = due.filter((e) => e.at <= t);
      due = due.filter((e) => e.at > t);
      for (const e of ready) if (e.live) e.fn();
    },
  };
}
