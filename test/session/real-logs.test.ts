/**
 * The real-log suite: every log in ../shared/fixtures/dsh loads here exactly when the real dsh
 * loads it, and derives the same model-visible messages (the oracle is
 * ../shared/fixtures/dsh-derived, produced by dsh's own code).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { loadJsonl, SessionError } from '../../src/session/index.js';
import { describeShared, hasShared, sharedPath } from '../support/shared.js';

interface Oracle {
  file: string;
  ok: boolean;
  error?: string;
  stage?: string;
  derivedMessages?: unknown[];
  surfaceNodes?: number[];
  replaceGeneration?: number;
  eventCount?: number | null;
  sessionEventCount?: number;
  rowCount?: number;
  tornTail?: boolean | null;
  repairClosers?: unknown[];
  /** For refused logs: what dsh does once the missing header fields are filled in. */
  withHeaderFilled?: {
    headerFieldsAdded: string[];
    ok: boolean;
    error?: string;
    eventCount?: number | null;
    tornTail?: boolean | null;
    derivedMessages?: unknown[];
  };
}

/** Fill the header fields dsh's oracle filled (version 0, delegationDepth 0). */
function fillHeader(text: string, fields: string[]): string {
  const nl = text.indexOf('\n');
  const header = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
  for (const f of fields) header[f] = 0;
  return JSON.stringify(header) + text.slice(nl);
}

const logs = hasShared
  ? readdirSync(sharedPath('fixtures', 'dsh'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
  : [];

describeShared('real dsh v0 logs', () => {
  it('has the 101 logs and their oracles', () => {
    expect(logs.length).toBe(101);
  });

  for (const name of logs) {
    it(name, () => {
      const text = readFileSync(sharedPath('fixtures', 'dsh', name), 'utf8');
      const oracle = JSON.parse(readFileSync(sharedPath('fixtures', 'dsh-derived', name.replace(/\.jsonl$/, '.json')), 'utf8')) as Oracle;
      if (!oracle.ok) {
        let err: unknown;
        try {
          loadJsonl(text, { file: name, placeholders: 'warn' });
        } catch (e) {
          err = e;
        }
        expect(err, `dsh refuses ${name} (${oracle.error}); so must we`).toBeInstanceOf(SessionError);
        expect((err as SessionError).message).toContain(name);
        // With the header repaired, the verdict on the events must agree with dsh too.
        const filled = oracle.withHeaderFilled!;
        const text2 = fillHeader(text, filled.headerFieldsAdded);
        if (filled.ok) {
          const loaded = loadJsonl(text2, { file: name, placeholders: 'warn' });
          expect(loaded.session.deriveMessages().toArray()).toEqual(filled.derivedMessages);
          expect(loaded.eventCount).toBe(filled.eventCount);
          expect(Boolean(loaded.tornTail)).toBe(Boolean(filled.tornTail));
        } else {
          expect(() => loadJsonl(text2, { file: name, placeholders: 'warn' }), filled.error).toThrow(SessionError);
        }
        return;
      }
      const loaded = loadJsonl(text, { file: name, placeholders: 'warn' });
      expect(loaded.session.deriveMessages().toArray()).toEqual(oracle.derivedMessages);
      expect(loaded.session.surface.nodes).toEqual(oracle.surfaceNodes);
      expect(loaded.session.surface.replaceGeneration).toBe(oracle.replaceGeneration);
      expect(loaded.eventCount).toBe(oracle.eventCount);
      expect(loaded.session.length).toBe(oracle.sessionEventCount);
      expect(loaded.rowCount).toBe(oracle.rowCount);
      expect(Boolean(loaded.tornTail)).toBe(Boolean(oracle.tornTail));
      expect(loaded.repaired).toEqual(oracle.repairClosers);
    });
  }
});
