import { describe, expect, it } from 'vitest';
import {
  HookBus,
  type EmitHook,
  type HookDiagnostic,
  type ParallelHook,
  type SerialHook,
  type WaterfallHook,
} from '../../src/hooks/bus.js';

declare module '../../src/hooks/bus.js' {
  interface HookMap {
    'test/emit': EmitHook<{ n: number }>;
    'test/serial': SerialHook<{ log: string[] }>;
    'test/parallel': ParallelHook<{ log: string[] }>;
    'test/wf': WaterfallHook<{ text: string }, string>;
    'test/maybe': WaterfallHook<{ n: number }, { kind: 'retry' } | undefined>;
  }
}

function collect(bus: HookBus): HookDiagnostic[] {
  const out: HookDiagnostic[] = [];
  bus.onDiagnostic((d) => out.push(d));
  return out;
}

describe('emit', () => {
  it('calls listeners in order and contains a throwing one (sync and async)', async () => {
    const bus = new HookBus();
    const diags = collect(bus);
    const seen: string[] = [];
    bus.on(
      'test/emit',
      () => {
        seen.push('a');
        throw new Error('boom');
      },
      { name: 'thrower' },
    );
    bus.on(
      'test/emit',
      async () => {
        seen.push('b');
        throw new Error('async boom');
      },
      { name: 'async-thrower' },
    );
    bus.on('test/emit', (p) => {
      seen.push(`c${p.n}`);
    });
    expect(() => bus.emit('test/emit', { n: 1 })).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['a', 'b', 'c1']);
    expect(diags.map((d) => [d.kind, d.listener])).toEqual([
      ['emit-listener-threw', 'thrower'],
      ['emit-listener-threw', 'async-thrower'],
    ]);
  });

  it('a disposer removes exactly its listener, and disposing twice is harmless', () => {
    const bus = new HookBus();
    const seen: number[] = [];
    const d1 = bus.on('test/emit', () => void seen.push(1));
    bus.on('test/emit', () => void seen.push(2));
    d1();
    d1();
    bus.emit('test/emit', { n: 0 });
    expect(seen).toEqual([2]);
    expect(bus.has('test/emit')).toBe(true);
  });

  it('prepend runs a listener before earlier ones', () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on('test/emit', () => void seen.push('late'));
    bus.on('test/emit', () => void seen.push('first'), { prepend: true });
    bus.emit('test/emit', { n: 0 });
    expect(seen).toEqual(['first', 'late']);
  });

  it('a listener added during dispatch does not see the event in flight', () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on('test/emit', () => {
      seen.push('a');
      bus.on('test/emit', () => void seen.push('added'));
    });
    bus.emit('test/emit', { n: 0 });
    expect(seen).toEqual(['a']);
    bus.emit('test/emit', { n: 0 });
    expect(seen).toEqual(['a', 'a', 'added']);
  });
});

describe('serial and parallel', () => {
  it('serial awaits each listener in order', async () => {
    const bus = new HookBus();
    const log: string[] = [];
    bus.on('test/serial', async (p) => {
      await new Promise((r) => setTimeout(r, 5));
      p.log.push('slow');
    });
    bus.on('test/serial', (p) => void p.log.push('fast'));
    await bus.serial('test/serial', { log });
    expect(log).toEqual(['slow', 'fast']);
  });

  it('serial propagates a throw and stops there', async () => {
    const bus = new HookBus();
    const log: string[] = [];
    bus.on('test/serial', () => {
      throw new Error('stop');
    });
    bus.on('test/serial', (p) => void p.log.push('never'));
    await expect(bus.serial('test/serial', { log })).rejects.toThrow('stop');
    expect(log).toEqual([]);
  });

  it('parallel runs all listeners and aggregates failures', async () => {
    const bus = new HookBus();
    const log: string[] = [];
    let concurrent = 0;
    let peak = 0;
    const body = async (p: { log: string[] }, name: string): Promise<void> => {
      concurrent++;
      peak = Math.max(peak, concurrent);
      await new Promise((r) => setTimeout(r, 5));
      concurrent--;
      p.log.push(name);
    };
    bus.on('test/parallel', (p) => body(p, 'a'));
    bus.on('test/parallel', (p) => body(p, 'b'));
    bus.on('test/parallel', async () => {
      throw new Error('bad');
    });
    const err = await bus.parallel('test/parallel', { log }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors).toHaveLength(1);
    expect(log.sort()).toEqual(['a', 'b']);
    expect(peak).toBe(2);
  });
});

describe('waterfall', () => {
  it('passes the payload through the chain to the terminal', async () => {
    const bus = new HookBus();
    expect(await bus.waterfall('test/wf', { text: 'x' }, (p) => `T(${p.text})`)).toBe('T(x)');
  });

  it('lets a listener rewrite the payload it passes on and the result it returns', async () => {
    const bus = new HookBus();
    bus.on('test/wf', async (p, next) => `<${await next({ text: p.text.toUpperCase() })}>`);
    bus.on('test/wf', (p, next) => next({ text: `${p.text}!` }));
    expect(await bus.waterfall('test/wf', { text: 'hi' }, (p) => p.text)).toBe('<HI!>');
  });

  it('short-circuits when a listener returns without calling next', async () => {
    const bus = new HookBus();
    let reachedSecond = false;
    let reachedTerminal = false;
    bus.on('test/wf', () => 'cached');
    bus.on('test/wf', (p, next) => {
      reachedSecond = true;
      return next(p);
    });
    const r = await bus.waterfall('test/wf', { text: 'x' }, () => {
      reachedTerminal = true;
      return 'live';
    });
    expect(r).toBe('cached');
    expect(reachedSecond).toBe(false);
    expect(reachedTerminal).toBe(false);
  });

  it('reports a listener that neither calls next() nor decides, naming it, and continues', async () => {
    const bus = new HookBus();
    const diags = collect(bus);
    bus.on('test/wf', function forgetful() {
      return undefined;
    });
    const r = await bus.waterfall('test/wf', { text: 'x' }, (p) => `T(${p.text})`);
    expect(r).toBe('T(x)');
    expect(diags).toHaveLength(1);
    expect(diags[0]!.kind).toBe('no-decision');
    expect(diags[0]!.listener).toBe('forgetful');
    expect(diags[0]!.message).toContain('forgetful');
    expect(diags[0]!.message).toContain('test/wf');
  });

  it('reports a listener that calls next() but drops its result, and keeps the result', async () => {
    const bus = new HookBus();
    const diags = collect(bus);
    bus.on(
      'test/wf',
      async (p, next) => {
        await next(p);
        return undefined;
      },
      { name: 'dropper' },
    );
    expect(await bus.waterfall('test/wf', { text: 'x' }, () => 'kept')).toBe('kept');
    expect(diags.map((d) => [d.kind, d.listener])).toEqual([['result-dropped', 'dropper']]);
  });

  it('does not warn when the downstream result is legitimately undefined', async () => {
    const bus = new HookBus();
    const diags = collect(bus);
    bus.on('test/maybe', (p, next) => next(p));
    expect(await bus.waterfall('test/maybe', { n: 1 }, () => undefined)).toBeUndefined();
    expect(diags).toEqual([]);
  });

  it('lets a wrapper call next() more than once (a retry wrapper)', async () => {
    const bus = new HookBus();
    let calls = 0;
    bus.on('test/wf', async (p, next) => {
      try {
        return await next(p);
      } catch {
        return next(p);
      }
    });
    const r = await bus.waterfall('test/wf', { text: 'x' }, () => {
      calls++;
      if (calls === 1) throw new Error('flaky');
      return 'second';
    });
    expect(r).toBe('second');
    expect(calls).toBe(2);
  });

  it('propagates a throwing listener to the caller', async () => {
    const bus = new HookBus();
    bus.on('test/wf', () => {
      throw new Error('policy exploded');
    });
    await expect(bus.waterfall('test/wf', { text: 'x' }, () => 'y')).rejects.toThrow('policy exploded');
  });
});
