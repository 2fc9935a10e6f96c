/**
 * Session titles (src/coding/title.ts): the fallback rule against every title dsh wrote in the
 * shared logs (the plugin itself is checked by the SDK conformance run: test/scripts/conformance.test.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fallbackTitle } from '../../src/coding/title.js';
import { describeShared, sharedPath } from '../support/shared.js';

describe('fallbackTitle', () => {
  it('keeps the first five words, at most 40 characters, whole code points', () => {
    expect(fallbackTitle('  say\n pong  ')).toBe('say pong');
    expect(fallbackTitle('one two three four five six')).toBe('one two three four five');
    expect(fallbackTitle('   ')).toBeUndefined();
    const emoji = `${'a'.repeat(39)}😀 tail`;
    expect(Array.from(fallbackTitle(emoji)!)).toHaveLength(40);
    expect(fallbackTitle(`${'x'.repeat(39)} y`)).toBe('x'.repeat(39));
  });
});

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return jsonlFiles(p);
    return n.endsWith('.jsonl') ? [p] : [];
  });
}

describeShared('fallback titles match dsh', () => {
  it('gives the title dsh wrote for every fallback title in the shared logs', () => {
    let checked = 0;
    for (const file of jsonlFiles(sharedPath('fixtures'))) {
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      const records = lines.flatMap((l) => {
        try {
          const v = JSON.parse(l) as { type?: string; event?: unknown; params?: { event?: unknown } };
          return [(v.params?.event ?? v.event ?? v) as { type?: string; seq?: number; data?: Record<string, unknown> }];
        } catch {
          return [];
        }
      });
      for (const t of records) {
        if (t.type !== 'session/title' || (t.data?.source as { kind?: string })?.kind !== 'fallback') continue;
        const seq = (t.data?.messageSeqs as number[] | undefined)?.[0];
        const m = records.find((r) => r.type === 'user/message' && r.seq === seq);
        if (!m) continue;
        const text = ((m.data?.content ?? []) as { type: string; text?: string }[])
          .filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join('\n');
        expect(fallbackTitle(text), file).toBe(t.data?.title);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
