/**
 * Seeded fuzzing of the log readers (issue 11 item 5): mutations of real dsh logs (byte flips,
 * truncations, line swaps and duplicates, numbers JSON cannot carry exactly, 100,000-deep
 * nesting in every field kind, NUL, invalid UTF-8, a BOM, CRLF, `__proto__`, unknown types)
 * go through `loadJsonl`, `loadJsonlFile` and `dsh log check` (its command function in process;
 * the caller may spawn the real CLI for a sample). The invariants, per case:
 *
 * - nothing but a `SessionError` is ever thrown, and every refusal names a line;
 * - the two loaders agree (same verdict, same error code and line, same events);
 * - an accepted log derives its messages, re-encodes to text that loads to the same events, and
 *   replays through the real loop without an internal error;
 * - `dsh log check` agrees with the loaders and prints no internal error.
 *
 * `npm run fuzz` runs 20,000 cases (`--cases N`, `--seed S`); `npm test` runs 2,000 of them
 * (test/session/fuzz.test.ts). A failure prints the seed and case number that reproduce it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadJsonl, loadJsonlFile, type LoadedLog } from '../src/session/codec/load.js';
import { encodeJsonl } from '../src/session/codec/jsonl.js';
import { SessionError } from '../src/session/errors.js';
import { CodedError } from '../src/model/coded-error.js';
import { deepEqual } from '../src/session/surface.js';
import { runCheck } from '../src/cli/log/check.js';
import { Output } from '../src/cli/output.js';
import { replaySession } from '../src/replay/harness.js';

// ---------------------------------------------------------------------------------------------
// Randomness

/** mulberry32: small, fast, and the same sequence on every machine for a seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: () => number, n: number): number => Math.floor(r() * n);

// ---------------------------------------------------------------------------------------------
// Mutations (each takes the file's bytes and returns new bytes)

export const LOSSY_NUMBERS = ['9007199254740993', '1e-400', '-0', '1e400', '-1e400', '123456789012345678901234567890'] as const;

type Mutation = (b: Buffer, r: () => number) => Buffer;

const lines = (b: Buffer): string[] => b.toString('utf8').split('\n');
const joinLines = (ls: string[]): Buffer => Buffer.from(ls.join('\n'), 'utf8');

/** Byte ranges of every JSON value of a kind in a line: used to swap a value for a hostile one. */
function valueSpans(line: string, key: string): [number, number][] {
  const spans: [number, number][] = [];
  const needle = `"${key}":`;
  let at = line.indexOf(needle);
  while (at >= 0) {
    const start = at + needle.length;
    const end = valueEnd(line, start);
    if (end > start) spans.push([start, end]);
    at = line.indexOf(needle, start);
  }
  return spans;
}

/** End of the JSON value starting at `i` (a scan that respects strings and nesting). */
function valueEnd(s: string, i: number): number {
  let depth = 0;
  let inStr = false;
  for (let k = i; k < s.length; k++) {
    const c = s[k]!;
    if (inStr) {
      if (c === '\\') k++;
      else if (c === '"') {
        inStr = false;
        if (depth === 0) return k + 1;
      }
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return k;
      depth--;
      if (depth === 0) return k + 1;
    } else if (c === ',' && depth === 0) return k;
  }
  return s.length;
}

const FIELD_KINDS = [
  'seq',
  'time',
  'data',
  'type',
  'turn',
  'step',
  'content',
  'text',
  'dt',
  'texts',
  'seq0',
  'time0',
  'surfaceOp',
  'sourceEventSeqs',
  'message',
  'chunk',
  'reason',
  'header',
  'usage',
  'version',
  'createdAt',
  'id',
  'cwd',
  'delegationDepth',
  'arguments',
  'index',
];

function nest(depth: number, r: () => number): string {
  const leaf = pick(r, ['1', '"x"', '-0', '1e400', 'null', '{}', '[]']);
  return r() < 0.5 ? '['.repeat(depth) + leaf + ']'.repeat(depth) : '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

/** Replace one value of a field kind (on a random line that has it) by `make()`. */
function replaceField(b: Buffer, r: () => number, make: () => string, kinds: readonly string[] = FIELD_KINDS): Buffer {
  const ls = lines(b);
  for (let tries = 0; tries < 8; tries++) {
    const key = pick(r, kinds);
    const candidates = ls.map((l, i) => [i, valueSpans(l, key)] as const).filter(([, s]) => s.length > 0);
    if (candidates.length === 0) continue;
    const [i, spans] = pick(r, candidates);
    const [s, e] = pick(r, spans);
    ls[i] = ls[i]!.slice(0, s) + make() + ls[i]!.slice(e);
    return joinLines(ls);
  }
  return b;
}

export const MUTATIONS: Record<string, Mutation> = {
  byteFlip: (b, r) => {
    const out = Buffer.from(b);
    const n = 1 + int(r, 3);
    for (let k = 0; k < n && out.length > 0; k++) out[int(r, out.length)]! ^= 1 << int(r, 8);
    return out;
  },
  truncate: (b, r) => b.subarray(0, int(r, b.length + 1)),
  swapLines: (b, r) => {
    const ls = lines(b);
    if (ls.length < 3) return b;
    const i = int(r, ls.length - 1);
    const j = int(r, ls.length - 1);
    [ls[i], ls[j]] = [ls[j]!, ls[i]!];
    return joinLines(ls);
  },
  duplicateLine: (b, r) => {
    const ls = lines(b);
    const i = int(r, Math.max(1, ls.length - 1));
    ls.splice(i + int(r, 3), 0, ls[i]!);
    return joinLines(ls);
  },
  dropLine: (b, r) => {
    const ls = lines(b);
    if (ls.length < 2) return b;
    ls.splice(int(r, ls.length - 1), 1);
    return joinLines(ls);
  },
  lossyNumber: (b, r) => {
    const text = b.toString('utf8');
    const tokens = [...text.matchAll(/(?<=[:,[])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[,}\]])/g)];
    if (tokens.length === 0) return b;
    const m = pick(r, tokens);
    return Buffer.from(text.slice(0, m.index) + pick(r, LOSSY_NUMBERS) + text.slice(m.index! + m[0].length), 'utf8');
  },
  deepNesting: (b, r) => replaceField(b, r, () => nest(pick(r, [6_000, 100_000]), r)),
  wrongValue: (b, r) =>
    replaceField(b, r, () =>
      pick(r, [
        'null',
        '"{{cwd}}"',
        '[]',
        '{}',
        '-1',
        '0',
        '1.5',
        '"__proto__"',
        'true',
        '"x"',
        '9007199254740993',
        '{"__proto__":{"polluted":1}}',
      ]),
    ),
  nul: (b, r) => {
    const i = int(r, b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from([0]), b.subarray(i)]);
  },
  invalidUtf8: (b, r) => {
    const i = int(r, b.length + 1);
    return Buffer.concat([
      b.subarray(0, i),
      Buffer.from(pick(r, [[0xff], [0xc3], [0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]])),
      b.subarray(i),
    ]);
  },
  bom: (b) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]),
  crlf: (b) => Buffer.from(b.toString('utf8').replace(/\n/g, '\r\n'), 'utf8'),
  proto: (b, r) => {
    const ls = lines(b);
    const i = int(r, Math.max(1, ls.length - 1));
    const l = ls[i]!;
    const at = l.indexOf('{', int(r, Math.max(1, l.length)));
    const pos = at >= 0 ? at : l.indexOf('{');
    if (pos < 0) return b;
    ls[i] = `${l.slice(0, pos + 1)}"__proto__":{"polluted":true,"type":"turn/end"},${l.slice(pos + 1)}`.replace(',}', '}');
    return joinLines(ls);
  },
  unknownType: (b, r) =>
    replaceField(
      b,
      r,
      () =>
        pick(r, [
          '"x/unknown"',
          '"unknowntype"',
          '"session"',
          '"text-chunks"',
          '"steering/message"',
          '"request/header-delta"',
          '"mode/set"',
          '""',
        ]),
      ['type'],
    ),
  emptyFile: () => Buffer.alloc(0),
  headerOnly: (b) => b.subarray(0, b.indexOf(10) + 1),
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

export interface FuzzCase {
  index: number;
  source: string;
  mutations: string[];
  bytes: Buffer;
}

/** Case `index` of a run: deterministic in (seed, index) and the corpus. */
export function makeCase(corpus: readonly { name: string; bytes: Buffer }[], seed: number, index: number): FuzzCase {
  const r = rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const src = pick(r, corpus);
  const n = r() < 0.8 ? 1 : 2 + int(r, 2);
  let bytes = src.bytes;
  const names: string[] = [];
  for (let k = 0; k < n; k++) {
    const name = MUTATION_NAMES[index % MUTATION_NAMES.length]!;
    const chosen = k === 0 ? name : pick(r, MUTATION_NAMES);
    names.push(chosen);
    bytes = MUTATIONS[chosen]!(bytes, r);
  }
  return { index, source: src.name, mutations: names, bytes };
}

// ---------------------------------------------------------------------------------------------
// Invariants

export interface CaseOutcome {
  accepted: boolean;
  code?: string;
  problem?: string;
}

function describeThrown(e: unknown): string {
  return e instanceof Error
    ? `${e.name}: ${e.message.slice(0, 300)}\n${(e.stack ?? '').split('\n').slice(1, 6).join('\n')}`
    : String(e).slice(0, 300);
}

type Verdict = { ok: true; log: LoadedLog } | { ok: false; error: SessionError } | { ok: false; untyped: unknown };

function attempt(fn: () => LoadedLog): Verdict {
  try {
    return { ok: true, log: fn() };
  } catch (e) {
    if (e instanceof SessionError) return { ok: false, error: e };
    return { ok: false, untyped: e };
  }
}

const sink = { write: (): boolean => true };

/**
 * Check one case. `dir` is a scratch folder for the file-based readers. Returns the problem found,
 * if any (the caller reports it with the case's seed and index).
 */
export async function checkCase(c: FuzzCase, dir: string, opts: { replay?: boolean } = {}): Promise<CaseOutcome> {
  const path = join(dir, `case-${c.index}.jsonl`);
  writeFileSync(path, c.bytes);
  try {
    const clock = (): number => 0; // the same times for closers and markers on every load
    const a = attempt(() => loadJsonl(c.bytes, { file: path, placeholders: 'warn', clock }));
    const b = attempt(() => loadJsonlFile(path, { placeholders: 'warn', clock }));
    for (const [name, v] of [
      ['loadJsonl', a],
      ['loadJsonlFile', b],
    ] as const) {
      if ('untyped' in v) return { accepted: false, problem: `${name} threw an untyped error: ${describeThrown(v.untyped)}` };
      if (!v.ok && !(typeof v.error.details.line === 'number' && v.error.details.line >= 1))
        return { accepted: false, problem: `${name} refused without a line: ${v.error.code} ${v.error.message.slice(0, 300)}` };
      if (!v.ok && v.error.message.length > 4_000)
        return { accepted: false, problem: `${name} refusal message is ${v.error.message.length} characters long` };
    }
    if (a.ok !== b.ok)
      return {
        accepted: false,
        problem: `the loaders disagree: loadJsonl ${a.ok ? 'accepts' : 'refuses'}, loadJsonlFile ${b.ok ? 'accepts' : 'refuses'}`,
      };
    if (
      !a.ok &&
      !b.ok &&
      'error' in a &&
      'error' in b &&
      (a.error.code !== b.error.code || a.error.details.line !== b.error.details.line)
    ) {
      return {
        accepted: false,
        problem: `the loaders refuse differently: ${a.error.code}@${a.error.details.line} vs ${b.error.code}@${b.error.details.line}`,
      };
    }
    // dsh log check, in process: its verdict must be the loaders', and it must not fail internally.
    let out = '';
    const io = { out: new Output({ write: (s: string) => ((out += s), true) }, false), err: new Output(sink, false), env: {} };
    let code: number;
    try {
      code = await runCheck([path], {}, io);
      io.out.flush();
    } catch (e) {
      return { accepted: false, problem: `dsh log check threw: ${describeThrown(e)}` };
    }
    if ((code === 0) !== a.ok)
      return {
        accepted: a.ok,
        problem: `dsh log check says ${code === 0 ? 'ok' : 'failed'} where the loaders ${a.ok ? 'accept' : 'refuse'}: ${out.slice(0, 300)}`,
      };
    if (/internal error/i.test(out)) return { accepted: a.ok, problem: `dsh log check printed an internal error: ${out.slice(0, 300)}` };
    if (!a.ok) return { accepted: false, code: 'error' in a ? a.error.code : 'untyped' };

    const loaded = a.log;
    if (!b.ok || !deepEqual(loaded.session.events, b.log.session.events))
      return { accepted: true, problem: 'the loaders accept different events' };
    // Derive, re-encode, reload: the same events.
    let messages: readonly unknown[];
    try {
      messages = loaded.session.deriveMessages().toArray();
    } catch (e) {
      return { accepted: true, problem: `deriveMessages threw: ${describeThrown(e)}` };
    }
    let again: LoadedLog;
    try {
      again = loadJsonl(encodeJsonl(loaded.session.header, loaded.session.events), { placeholders: 'warn', clock });
    } catch (e) {
      return { accepted: true, problem: `the re-encoded log does not load: ${describeThrown(e)}` };
    }
    if (!deepEqual(again.session.events, loaded.session.events)) return { accepted: true, problem: 're-encoding changed the events' };
    if (!deepEqual(again.session.deriveMessages().toArray(), messages))
      return { accepted: true, problem: 're-encoding changed the derived messages' };
    if (opts.replay !== false) {
      try {
        await replaySession(loaded.session, { retry: false });
      } catch (e) {
        // A typed refusal (a SessionError, or the agent's own coded errors: dsh's snapshot logs
        // give every message the one placeholder id {{messageId}}, which the inbox refuses as a
        // duplicate, DUPLICATE_MESSAGE_ID) is an answer; anything untyped is an internal error.
        if (!(e instanceof CodedError)) return { accepted: true, problem: `replay failed internally: ${describeThrown(e)}` };
      }
    }
    return { accepted: true };
  } finally {
    rmSync(path, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Corpus and runner

/** The real logs the mutations start from: every *.jsonl under the given folders. */
export function loadCorpus(dirs: readonly string[]): { name: string; bytes: Buffer }[] {
  const out: { name: string; bytes: Buffer }[] = [];
  for (const d of dirs) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)
      .filter((x) => x.endsWith('.jsonl'))
      .sort())
      out.push({ name: `${d.split('/').pop()}/${f}`, bytes: readFileSync(join(d, f)) });
  }
  return out;
}

export interface FuzzSummary {
  cases: number;
  accepted: number;
  refused: Record<string, number>;
  byMutation: Record<string, number>;
  failures: { index: number; source: string; mutations: string[]; problem: string }[];
}

export async function runFuzz(
  corpus: readonly { name: string; bytes: Buffer }[],
  opts: { seed: number; cases: number; from?: number; replay?: boolean; onProgress?: (done: number) => void },
): Promise<FuzzSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-fuzz-'));
  const summary: FuzzSummary = { cases: 0, accepted: 0, refused: {}, byMutation: {}, failures: [] };
  try {
    const from = opts.from ?? 0;
    for (let i = from; i < from + opts.cases; i++) {
      const c = makeCase(corpus, opts.seed, i);
      const o = await checkCase(c, dir, { replay: opts.replay ?? true });
      summary.cases++;
      for (const m of c.mutations) summary.byMutation[m] = (summary.byMutation[m] ?? 0) + 1;
      if (o.accepted) summary.accepted++;
      else if (o.code) summary.refused[o.code] = (summary.refused[o.code] ?? 0) + 1;
      if (o.problem) summary.failures.push({ index: i, source: c.source, mutations: c.mutations, problem: o.problem });
      if (opts.onProgress && (i + 1) % 1000 === 0) opts.onProgress(i + 1 - from);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return summary;
}

export function defaultCorpusDirs(shared: string): string[] {
  return ['dsh', 'dsh-web', 'dsh-next'].map((d) => join(shared, 'fixtures', d));
}

async function main(argv: string[]): Promise<number> {
  const arg = (name: string, dflt: number): number => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? Number(argv[i + 1]) : dflt;
  };
  const cases = arg('--cases', 20_000);
  const seed = arg('--seed', 11);
  const shared = process.env.DSH_SHARED_DIR ?? resolve(process.cwd(), '..', 'shared');
  const corpus = loadCorpus(defaultCorpusDirs(shared));
  if (corpus.length === 0) {
    process.stderr.write(`no corpus: ${shared}/fixtures holds no dsh logs\n`);
    return 2;
  }
  const started = Date.now();
  const s = await runFuzz(corpus, { seed, cases, onProgress: (n) => process.stderr.write(`… ${n} cases\n`) });
  process.stdout.write(
    `fuzz: seed ${seed}, ${s.cases} cases from ${corpus.length} real logs in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  process.stdout.write(
    `  accepted ${s.accepted}, refused ${s.cases - s.accepted} (${Object.entries(s.refused)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})\n`,
  );
  process.stdout.write(
    `  mutations: ${Object.entries(s.byMutation)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}\n`,
  );
  process.stdout.write(`  failures: ${s.failures.length}\n`);
  for (const f of s.failures.slice(0, 20))
    process.stdout.write(`  case ${f.index} (${f.source}; ${f.mutations.join('+')}): ${f.problem}\n`);
  return s.failures.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      process.stderr.write(`fuzz: ${describeThrown(e)}\n`);
      process.exitCode = 2;
    },
  );
}
