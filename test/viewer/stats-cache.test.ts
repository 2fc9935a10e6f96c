/**
 * The viewer keeps its stats fold between answers and folds only what the log gained (review of
 * issue 14, finding 6): after each growth, including mid-turn with calls open, the kept fold's
 * answer is the one a fresh fold of the whole log gives.
 */
import { expect, it } from 'vitest';
import { statsView, type StatsCache } from '../../src/viewer/model/inspect.js';
import { openSource } from '../../src/viewer/source/open.js';
import { LogWriter } from './support/logs.js';

it('a kept stats fold answers what a fresh fold of the whole log does, after every growth', async () => {
  const w = new LogWriter('stats-cache');
  const src = await openSource(w.session);
  const cache: StatsCache = {};
  const check = (): void => {
    const kept = statsView(src, cache);
    expect(cache.done).toBe(w.session.length);
    expect(kept).toEqual(statsView(src, {}));
  };
  check();
  for (let t = 1; t <= 4; t++) {
    w.beginTurn(`task ${t}`);
    if (t === 1) w.header('m-1');
    check();
    w.respond(`turn ${t}`, [
      { id: `a${t}`, name: 'read', args: '{}' },
      { id: `b${t}`, name: 'bash', args: '{}' },
    ]);
    check(); // issued, not dispatched
    const a = w.call(`a${t}`, 'read', '{}');
    check(); // one in flight
    w.result(a, `a${t}`, 'text', t % 2 ? 'FS_NOT_FOUND' : undefined);
    if (t !== 3) w.tool(`b${t}`, 'bash', '{}', 'ok');
    w.endStep();
    check();
    w.beginStep();
    w.respond('done');
    w.endStep();
    w.endTurn();
    check();
  }
  expect((statsView(src, cache) as { stats: { toolCalls: number } }).stats.toolCalls).toBe(8);
});
