/**
 * The status line: figures in, one line out, written by hand; dropping parts on a narrow
 * terminal; and the tracker's figures against the query layer's stats and the price table.
 */
import { describe, expect, it } from 'vitest';
import { costText, renderStatus, StatusTracker, type StatusInput } from '../../../src/terminal/render/status.js';
import { compactCount, elapsed } from '../../../src/terminal/render/units.js';
import { stripStyles } from '../../../src/terminal/render/style.js';
import { textWidth } from '../../../src/terminal/render/width.js';
import { PriceTable } from '../../../src/llm/pricing.js';
import type { SessionEvent } from '../../../src/session/events.js';

const full: StatusInput = {
  busy: true,
  frame: 3,
  elapsedMs: 12_345,
  model: 'deepseek-v4-pro',
  tokens: { input: 12_345, output: 678, cacheRead: 40_000, cacheWrite: 0 },
  cost: { byCurrency: { USD: 0.01234 }, unpricedCalls: 0 },
  context: { used: 52_345, window: 128_000 },
  sandbox: 'workspace-write',
  approval: 'on-request',
};

describe('status line', () => {
  it('shows every part when the width allows', () => {
    expect(renderStatus(full, { width: 200, color: false })).toEqual([
      '⠸ 12.3s · deepseek-v4-pro · in 12k out 678 · cache 40k · $0.012 · ctx 41% · approval on-request · workspace-write',
    ]);
  });

  it('names the approval policy as such: `approval never`, `approval ask` (not `ask never`, `ask ask`)', () => {
    expect(renderStatus({ busy: false, frame: 0, elapsedMs: 0, approval: 'never' }, { width: 80, color: false })).toEqual([
      '0.0s · approval never',
    ]);
    expect(renderStatus({ busy: false, frame: 0, elapsedMs: 0, approval: 'ask' }, { width: 80, color: false })).toEqual([
      '0.0s · approval ask',
    ]);
  });

  it('styles each part (spinner cyan, elapsed bold, cost green, separators dim)', () => {
    const [line] = renderStatus(
      { busy: true, frame: 0, elapsedMs: 1000, cost: { byCurrency: { USD: 2 }, unpricedCalls: 0 } },
      { width: 80, color: true },
    );
    expect(line).toBe('\x1b[36m⠋\x1b[0m \x1b[1m1.0s\x1b[0m\x1b[2m · \x1b[0m\x1b[32m$2.00\x1b[0m');
  });

  it('drops sandbox, approval, cache, model, cost, tokens in that order as the width shrinks', () => {
    const at = (w: number) => stripStyles(renderStatus(full, { width: w, color: false })[0]!);
    expect(at(95)).toBe('⠸ 12.3s · deepseek-v4-pro · in 12k out 678 · cache 40k · $0.012 · ctx 41% · approval on-request');
    expect(at(75)).toBe('⠸ 12.3s · deepseek-v4-pro · in 12k out 678 · cache 40k · $0.012 · ctx 41%');
    expect(at(72)).toBe('⠸ 12.3s · deepseek-v4-pro · in 12k out 678 · $0.012 · ctx 41%');
    expect(at(60)).toBe('⠸ 12.3s · in 12k out 678 · $0.012 · ctx 41%');
    expect(at(42)).toBe('⠸ 12.3s · in 12k out 678 · ctx 41%');
    expect(at(33)).toBe('⠸ 12.3s · ctx 41%');
    expect(at(16)).toBe('⠸ 12.3s');
    expect(at(5)).toBe('⠸ 12…');
    for (let w = 1; w < 120; w++) expect(textWidth(renderStatus(full, { width: w, color: true })[0]!)).toBeLessThanOrEqual(w);
  });

  it('idle: no spinner, the last turn time dimmed; context colour by share', () => {
    expect(
      renderStatus({ busy: false, frame: 0, elapsedMs: 65_000, context: { used: 95, window: 100 } }, { width: 80, color: true }),
    ).toEqual(['\x1b[2m1m05s\x1b[0m\x1b[2m · \x1b[0m\x1b[31mctx 95%\x1b[0m']);
  });

  it('formats counts, times and costs', () => {
    expect([950, 1234, 12_345, 1_234_567, 98_765_432].map(compactCount)).toEqual(['950', '1.2k', '12k', '1.2M', '99M']);
    expect([0, 4200, 65_000, 3_725_000].map(elapsed)).toEqual(['0.0s', '4.2s', '1m05s', '1h02m']);
    expect(costText({ byCurrency: {}, unpricedCalls: 2 })).toBe('cost ?');
    expect(costText({ byCurrency: { USD: 0.5, CNY: 3 }, unpricedCalls: 1 })).toBe('3.00 CNY + $0.500 +?');
    expect(costText({ byCurrency: { USD: 0.00012 }, unpricedCalls: 0 })).toBe('$0.0001');
  });

  it('a model name from the log cannot restyle the terminal', () => {
    const [line] = renderStatus({ busy: false, frame: 0, elapsedMs: 0, model: 'x\x1b[2Jy' }, { width: 80, color: false });
    expect(line).toBe('0.0s · x\\e[2Jy');
  });
});

describe('status tracker', () => {
  // 2026-10-01 03:00 UTC is a Thursday in a peak window: deepseek-flash at the peak rates
  // (0.30 input, 0.006 cache read, 1.20 output per million).
  const t0 = Date.UTC(2026, 9, 1, 3, 0, 0);
  let seq = 0;
  const ev = (type: string, data: unknown, dt = 0): SessionEvent => ({ type, seq: seq++, time: t0 + dt, data }) as unknown as SessionEvent;
  const usage = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 9000 };
  const events = [
    ev('turn/start', { turn: 1 }),
    ev('request/context', { provider: 'deepseek', model: 'deepseek-flash', contextWindow: 100_000 }),
    ev('step/start', { turn: 1, step: 1 }),
    ev('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [] }, usage }, 2000),
    ev('step/end', { turn: 1, step: 1 }, 2000),
  ];

  it('sums tokens and prices them as `dsh log stats` does; context is the last call against the window', () => {
    const t = new StatusTracker(new PriceTable());
    for (const e of events) t.push(e);
    const s = t.input(t0 + 5000, { sandbox: 'read-only' });
    expect(s.busy).toBe(true);
    expect(s.elapsedMs).toBe(5000);
    expect(s.model).toBe('deepseek-flash');
    expect(s.tokens).toEqual({ input: 1000, output: 200, cacheRead: 9000, cacheWrite: 0 });
    const expected = (1000 * 0.3 + 9000 * 0.006 + 200 * 1.2) / 1e6;
    expect(s.cost!.byCurrency.USD).toBeCloseTo(expected, 12);
    expect(s.context).toEqual({ used: 10_200, window: 100_000 });
    t.push(ev('turn/end', { turn: 1, reason: { kind: 'completed' } }, 3000));
    const after = t.input(t0 + 60_000);
    expect(after.busy).toBe(false);
    expect(after.elapsedMs).toBe(3000);
  });

  it('an unknown model is counted as unpriced, never as free', () => {
    const t = new StatusTracker(new PriceTable());
    t.push(ev('turn/start', { turn: 1 }));
    t.push(ev('request/context', { provider: 'other', model: 'mystery' }));
    t.push(ev('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [] }, usage }));
    const s = t.input(t0);
    expect(s.cost).toEqual({ byCurrency: {}, unpricedCalls: 1 });
    expect(stripStyles(renderStatus(s, { width: 80, color: false })[0]!)).toContain('cost ?');
  });
});
