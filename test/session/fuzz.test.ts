/**
 * Seeded fuzzing of the log readers in the regular suite (issue 11 item 5): 2,000 mutations of the
 * real dsh logs through loadJsonl, loadJsonlFile and `dsh log check` (in process), every accepted
 * one derived, re-encoded and replayed; and a sample through the real CLI process. The same
 * harness runs 20,000 cases in `npm run fuzz`. A failure names the seed and case to reproduce:
 * `node dist-scripts/scripts/fuzz.js --seed 2026 --cases 1` after `npx tsc -p tsconfig.scripts.json`
 * runs case 0; `runFuzz(corpus, {seed, from: N, cases: 1})` runs case N.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { checkCase, defaultCorpusDirs, loadCorpus, makeCase, MUTATION_NAMES, runFuzz } from '../../scripts/fuzz.js';
import { describeShared, repoRoot, sharedDir } from '../support/shared.js';

const SEED = 2026;
const CASES = 2_000;
const PER_TEST = 250;

describeShared('fuzzed real logs', () => {
  const corpus = loadCorpus(defaultCorpusDirs(sharedDir));
  let total = 0;
  let accepted = 0;

  it('has a corpus of real logs and every mutation kind', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(101);
    const kinds = new Set<string>();
    for (let i = 0; i < MUTATION_NAMES.length; i++) for (const m of makeCase(corpus, SEED, i).mutations) kinds.add(m);
    expect([...kinds].sort()).toEqual([...MUTATION_NAMES].sort());
  });

  for (let from = 0; from < CASES; from += PER_TEST) {
    it(`cases ${from}–${from + PER_TEST - 1}: only typed refusals with a line; accepted logs derive, round-trip and replay`, async () => {
      const s = await runFuzz(corpus, { seed: SEED, from, cases: PER_TEST });
      total += s.cases;
      accepted += s.accepted;
      expect(s.failures.map((f) => `case ${f.index} (${f.source}; ${f.mutations.join('+')}): ${f.problem}`)).toEqual([]);
    }, 600_000);
  }

  it('ran 2,000 cases, some accepted and some refused', () => {
    expect(total).toBe(CASES);
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(CASES);
  });

  // Found by `npm run fuzz` (seed 11): a BOM before the header (the loaders skip it with a
  // warning) and a NUL in the torn tail (the loaders set it aside). dsh log check judged the
  // file binary from its raw first byte and refused it while the loaders accepted it.
  it.each([
    ['a BOM', Buffer.from([0xef, 0xbb, 0xbf])],
    ['a BOM and spaces', Buffer.from([0xef, 0xbb, 0xbf, 0x20, 0x20])],
    ['a tab', Buffer.from([0x09])],
  ])('a NUL in the torn tail of a log that starts with %s: dsh log check agrees with the loaders', async (_what, prefix) => {
    const src = corpus.find((c) => c.bytes.length < 6_000 && c.bytes.toString('utf8').includes('"turn/end"'))!;
    const bytes = Buffer.concat([prefix, src.bytes, Buffer.from('{"type":"assistant/chunk","seq":'), Buffer.from([0, 0, 0])]);
    const dir = mkdtempSync(join(tmpdir(), 'dsh-fuzz-nul-'));
    try {
      const o = await checkCase({ index: 0, source: src.name, mutations: ['bom', 'nul'], bytes }, dir);
      expect(o.problem).toBeUndefined();
      expect(o.accepted).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The rule behind those cases, as a property (issue 11, session 3): a NUL is crash padding in a
  // torn tail, which the loaders set aside, so the CLI's binary pre-check may refuse only what the
  // loaders refuse too. Any JSON whitespace or BOM before the header, any bytes with NULs after
  // the last complete line (with or without newlines), NULs put into the header line: the
  // verdict of dsh log check is the loaders' verdict.
  it('property: wherever NULs sit and whatever precedes the header, dsh log check agrees with the loaders', async () => {
    const src = corpus.find((c) => c.bytes.length < 6_000 && c.bytes.toString('utf8').includes('"turn/end"'))!;
    const nl = src.bytes.indexOf(10);
    const dir = mkdtempSync(join(tmpdir(), 'dsh-fuzz-nulprop-'));
    let i = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.array(fc.constantFrom(0x20, 0x09, 0x0d, 0x0a), { maxLength: 3 }),
          fc.uint8Array({ maxLength: 40 }),
          fc.nat({ max: 39 }),
          fc.option(fc.nat({ max: nl }), { nil: undefined }),
          async (bom, ws, tail, nulAt, headerNul) => {
            const t = Buffer.from(tail);
            const padded = Buffer.concat([t, Buffer.alloc(Math.max(0, nulAt + 1 - t.length))]);
            padded[nulAt] = 0;
            const body = Buffer.from(src.bytes);
            if (headerNul !== undefined) body[headerNul] = 0;
            const bytes = Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), Buffer.from(ws), body, padded]);
            const o = await checkCase({ index: i++, source: src.name, mutations: ['nul-property'], bytes }, dir, { replay: false });
            expect(o.problem).toBeUndefined();
          },
        ),
        { numRuns: 150, seed: 11 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a sample through the real CLI process: dsh log check exits 0 or 1 with a line, never an internal error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-fuzz-cli-'));
    try {
      for (let i = 0; i < 24; i++) {
        const c = makeCase(corpus, SEED + 1, i);
        const path = join(dir, `case-${i}.jsonl`);
        writeFileSync(path, c.bytes);
        const r = spawnSync(process.execPath, [join(repoRoot, 'bin', 'dsh.js'), 'log', 'check', path], {
          encoding: 'utf8',
          timeout: 60_000,
        });
        const what = `case ${i} (${c.source}; ${c.mutations.join('+')}): ${r.stdout.slice(-400)} ${r.stderr.slice(-400)}`;
        expect([0, 1], what).toContain(r.status);
        expect(`${r.stdout}${r.stderr}`, what).not.toMatch(/internal error|RangeError|TypeError/);
        if (r.status === 1) expect(r.stdout, what).toMatch(/:\d+:|line \d+/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
