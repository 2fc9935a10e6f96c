/**
 * `npm run compat` (issue 11 item 6): agreement with an oracle folder in the dsh-derived format.
 * The real oracles are dsh's own verdicts; a doctored oracle must be reported as disagreement.
 */
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { expect, it, describe } from 'vitest';
import { compareFolders, compareLog, formatReport } from '../../scripts/compat.js';
import { describeShared, sharedPath } from '../support/shared.js';

describeShared('compat against dsh oracles', () => {
  it('agrees with dsh on all 101 shared v0 logs, and says so in the totals', () => {
    const dir = sharedPath('fixtures', 'dsh');
    const r = compareFolders(dir, sharedPath('fixtures', 'dsh-derived'));
    expect(r.logs).toHaveLength(101);
    expect(r.logs.filter((l) => !l.agrees).map((l) => `${l.name}: ${l.detail}`)).toEqual([]);
    expect(formatReport(r, dir)).toContain('dsh: 101/101 logs agree with the oracle');
  });

  it.runIf(existsSync(sharedPath('fixtures', 'dsh-web-derived')))(
    'agrees with dsh on the 20 web-app logs once their headers are filled',
    () => {
      const r = compareFolders(sharedPath('fixtures', 'dsh-web'), sharedPath('fixtures', 'dsh-web-derived'));
      expect(r.logs).toHaveLength(20);
      expect(r.logs.filter((l) => !l.agrees).map((l) => `${l.name}: ${l.detail}`)).toEqual([]);
    },
  );
});

describe('disagreement is reported', () => {
  const log =
    [
      JSON.stringify({ type: 'session', version: 0, id: 's', createdAt: 1, cwd: '/w', delegationDepth: 0 }),
      JSON.stringify({
        type: 'user/message',
        seq: 0,
        time: 1,
        data: { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
        surfaceOp: 'append',
      }),
    ].join('\n') + '\n';
  const msg = { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } };

  it('same verdict and messages agree; other messages or another verdict do not', () => {
    expect(compareLog('a.jsonl', log, { ok: true, derivedMessages: [msg] }).agrees).toBe(true);
    const other = compareLog('a.jsonl', log, { ok: true, derivedMessages: [{ ...msg, id: 'v' }] });
    expect(other).toMatchObject({ agrees: false, verdict: true, messages: false });
    expect(compareLog('a.jsonl', log, { ok: false, error: 'no' }).agrees).toBe(false);
  });

  it('a refusal is judged again with the header filled in', () => {
    const noDepth = log.replace(',"delegationDepth":0', '');
    expect(
      compareLog('b.jsonl', noDepth, {
        ok: false,
        withHeaderFilled: { headerFieldsAdded: ['delegationDepth'], ok: true, derivedMessages: [msg] },
      }).agrees,
    ).toBe(true);
    expect(
      compareLog('b.jsonl', noDepth, { ok: false, withHeaderFilled: { headerFieldsAdded: ['delegationDepth'], ok: false } }).agrees,
    ).toBe(false);
  });

  it('reads folders: a log without an oracle is listed, not counted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-compat-'));
    try {
      writeFileSync(join(dir, 'a.jsonl'), log);
      writeFileSync(join(dir, 'c.jsonl'), log);
      writeFileSync(join(dir, 'a.json'), JSON.stringify({ ok: true, derivedMessages: [msg] }));
      const r = compareFolders(dir, dir);
      expect(r.logs.map((l) => l.name)).toEqual(['a.jsonl']);
      expect(r.unmatched).toEqual(['c.jsonl']);
      expect(formatReport(r, dir)).toMatch(/1\/1 logs agree[\s\S]*1 log\(s\) without an oracle/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
