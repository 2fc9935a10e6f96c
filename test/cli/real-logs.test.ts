/**
 * The CLI on the 101 real dsh logs in ../shared: `check` agrees with dsh's verdict on each
 * (../shared/fixtures/dsh-derived, produced by dsh's own code), a refusal names its line,
 * `messages --json` prints exactly the history dsh derives, and `show` collapses every chunk run
 * to the counts computed here from the raw file. `check` runs as the real binary; the 182
 * per-log `show` and `messages` runs call the CLI's `main` in process (the same code, without
 * 182 process starts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { describeShared, hasShared, sharedPath } from '../support/shared.js';
import { chunkRuns, parseRaw } from './support/raw-log.js';
import { dshIn as dsh, runMain, type InprocRun } from './support/inproc.js';

interface Oracle {
  ok: boolean;
  error?: string;
  derivedMessages?: unknown[];
  eventCount?: number | null;
}

const names = hasShared
  ? readdirSync(sharedPath('fixtures', 'dsh'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
  : [];
const logPath = (n: string): string => sharedPath('fixtures', 'dsh', n);
const oracle = (n: string): Oracle =>
  JSON.parse(readFileSync(sharedPath('fixtures', 'dsh-derived', n.replace(/\.jsonl$/, '.json')), 'utf8')) as Oracle;

describeShared('dsh log … on the real dsh logs', () => {
  const accepted = names.filter((n) => oracle(n).ok);
  const refused = names.filter((n) => !oracle(n).ok);

  it('has the 101 logs, 91 accepted by dsh', () => {
    expect(names).toHaveLength(101);
    expect(accepted).toHaveLength(91);
  });

  it('check agrees with dsh on every log, and exits 1 because some are refused', async () => {
    const r = await dsh(['log', 'check', '--json', ...names.map(logPath)]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      files: {
        file: string;
        ok: boolean;
        summary: { events: number } | null;
        problems: { severity: string; line?: number; code: string }[];
      }[];
    };
    report.files.forEach((f, i) => {
      const o = oracle(names[i]!);
      expect(f.ok, names[i]).toBe(o.ok);
      if (o.ok) {
        expect(f.summary!.events, names[i]).toBe(o.eventCount);
        expect(
          f.problems.every((p) => p.severity === 'warning'),
          names[i],
        ).toBe(true);
      } else {
        expect(f.problems, names[i]).toEqual([expect.objectContaining({ severity: 'error', code: 'CORRUPT_LOG', line: 1 })]);
      }
    });
  });

  it('check passes on each accepted log alone and refuses each refused one with its line', async () => {
    const ok = await dsh(['log', 'check', '-q', ...accepted.map(logPath)]);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n').at(-1)).toBe('91 files: 91 ok, 0 failed');
    const bad = await dsh(['log', 'check', ...refused.map(logPath)]);
    expect(bad.code).toBe(1);
    for (const n of refused) {
      expect(bad.stdout, n).toContain(
        `${logPath(n)}:1: error CORRUPT_LOG (rule storage): corrupt session log: the first line is not a session header`,
      );
      expect(bad.stdout, n).toContain(`${logPath(n)}: FAILED\n`);
    }
  });

  const messages: InprocRun[] = [];
  const shows: InprocRun[] = [];
  beforeAll(async () => {
    for (const n of accepted) {
      messages.push(await runMain(['log', 'messages', '--json', logPath(n)]));
      shows.push(await runMain(['log', 'show', logPath(n)]));
    }
  });

  it('one real log, through the binary: messages --json is what dsh derives', async () => {
    const n = 'acp-agent__fs-edit.jsonl';
    const r = await dsh(['log', 'messages', '--json', logPath(n)]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(oracle(n).derivedMessages);
  });

  it('messages --json is exactly the history dsh derives, for every accepted log', () => {
    accepted.forEach((n, i) => {
      expect(messages[i]!.code, `${n}: ${messages[i]!.stderr}`).toBe(0);
      expect(JSON.parse(messages[i]!.stdout), n).toEqual(oracle(n).derivedMessages);
    });
  });

  it('show prints every turn and collapses every chunk run to the raw counts', () => {
    accepted.forEach((n, i) => {
      const r = shows[i]!;
      expect(r.code, `${n}: ${r.stderr}`).toBe(0);
      const { events } = parseRaw(readFileSync(logPath(n), 'utf8'));
      const lines = r.stdout.split('\n');
      const bySeq = new Map(
        lines
          .map((l) => /^\s*(\d+) {2}(.*)$/.exec(l))
          .filter((m) => m !== null)
          .map((m) => [Number(m[1]), m[2]!]),
      );
      for (const e of events) {
        if (e.type === 'turn/start') expect(bySeq.get(e.seq), n).toBe(`turn ${e.data.turn}`);
        if (e.type === 'turn/end') expect(bySeq.get(e.seq), n).toMatch(new RegExp(`^turn ${e.data.turn} end: ${e.data.reason.kind}`));
      }
      for (const run of chunkRuns(events)) {
        const text = bySeq.get(run.seq)!.trimStart();
        expect(text.startsWith(run.deltas ? `stream: ${run.deltas}` : 'stream: '), `${n} #${run.seq}: ${text}`).toBe(true);
      }
    });
  });
});

describeShared('the CLI streams log files', () => {
  it('readLog (streamed) gives exactly what loading the whole text gives, on every real log: events, warnings, verdicts', async () => {
    const { readLog } = await import('../../src/cli/read-log.js');
    const { loadJsonl } = await import('../../src/session/index.js');
    const loadLogText = (text: string, file: string) => loadJsonl(text, { file, placeholders: 'warn' });
    const outcome = async (
      f: () =>
        | { session: { events: readonly unknown[] }; warnings: unknown[]; rowCount: number; eventCount: number }
        | Promise<{ session: { events: readonly unknown[] }; warnings: unknown[]; rowCount: number; eventCount: number }>,
    ): Promise<unknown> => {
      try {
        const l = await f();
        // The end-seed marker carries the load's clock time; everything else must be identical.
        return {
          events: JSON.stringify(l.session.events.filter((e) => (e as { type: string }).type !== 'session/end-seed')),
          warnings: l.warnings,
          rowCount: l.rowCount,
          eventCount: l.eventCount,
        };
      } catch (e) {
        return { error: (e as Error).message, code: (e as { code?: unknown }).code };
      }
    };
    let refused = 0;
    for (const n of names) {
      const path = logPath(n);
      const whole = await outcome(() => loadLogText(readFileSync(path, 'utf8'), path));
      const streamed = await outcome(() => readLog(path));
      expect(streamed, n).toEqual(whole);
      if ((whole as { error?: string }).error !== undefined) refused++;
    }
    expect(refused).toBe(10);
  });
});

describeShared('dsh log show of the real logs packed', () => {
  it('prints what the same events one per line print, but for the row count, on every accepted real log', async () => {
    const { readLog } = await import('../../src/cli/read-log.js');
    const { encodeJsonl } = await import('../../src/session/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'dsh-packed-show-'));
    /** The header line's summary without its ` in N rows`, the one thing the stored form changes. */
    const rowless = (s: string): string => s.replace(/^([\d ]+ events?) in [\d ]+ rows?( · )/m, '$1$2');
    let withRuns = 0;
    try {
      for (const n of names.filter((x) => oracle(x).ok)) {
        const log = await readLog(logPath(n));
        const header = { ...log.header, type: undefined } as never;
        const plain = join(dir, `plain-${n}`);
        const packed = join(dir, `packed-${n}`);
        writeFileSync(plain, encodeJsonl(header, log.session.events, { pack: false }));
        writeFileSync(packed, encodeJsonl(header, log.session.events, { pack: true }));
        const a = await runMain(['log', 'show', plain]);
        const b = await runMain(['log', 'show', packed]);
        expect(a.code, `${n}: ${a.stderr}`).toBe(0);
        expect(b.code, `${n}: ${b.stderr}`).toBe(0);
        expect(rowless(b.stdout.replaceAll(packed, plain)), n).toBe(rowless(a.stdout));
        if ((await readLog(packed)).rowCount < (await readLog(plain)).rowCount) withRuns++;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Else no chunk run was read packed.
    expect(withRuns).toBeGreaterThan(20);
  });
});
