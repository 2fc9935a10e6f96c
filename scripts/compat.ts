/**
 * `npm run compat -- FIXTURE_DIR ORACLE_DIR`: how far this build agrees with an oracle of the real
 * dsh on a folder of logs. The oracle folder holds one JSON file per log, in the format of
 * ../shared/fixtures/dsh-derived (README there): `ok` (dsh's verdict), `derivedMessages` when dsh
 * accepts, `substitutions` it made before loading, and for a refused log `withHeaderFilled`: the
 * verdict (and messages) once the header fields it lacked are filled in.
 *
 * A log agrees when the verdicts match and, when both accept, the derived messages are equal;
 * for a log dsh refuses, its `withHeaderFilled` verdict and messages must match as well.
 * Prints one line per log and the totals; exits 1 when any log disagrees.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadJsonl } from '../src/session/codec/load.js';
import { deepEqual } from '../src/session/surface.js';

export interface OracleVerdict {
  ok: boolean;
  error?: string;
  derivedMessages?: unknown[];
}
export interface OracleFile extends OracleVerdict {
  file?: string;
  substitutions?: { headerCwd?: number; requestHeaderTools?: number };
  withHeaderFilled?: OracleVerdict & { headerFieldsAdded: string[] };
}

export interface Verdict {
  ok: boolean;
  error?: string;
  messages?: readonly unknown[];
}

export interface LogAgreement {
  name: string;
  /** Whether dsh's verdict (and messages) and ours agree, for the log as the oracle loaded it. */
  verdict: boolean;
  messages: boolean | undefined;
  /** The same with the missing header fields filled in (oracle refusals only). */
  filled?: { verdict: boolean; messages: boolean | undefined };
  agrees: boolean;
  detail: string;
}

/** Where the oracle put an absolute path for the header's `{{cwd}}` token. */
const CWD_STANDIN = '/tmp/dsh-fixture';

/** The log text as the oracle loaded it: substitutions applied, and header fields filled. */
export function prepareText(text: string, oracle: OracleFile, fill: readonly string[] = []): string {
  const nl = text.indexOf('\n');
  if (nl < 0) return text;
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
  } catch {
    return text;
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return text;
  let changed = false;
  if ((oracle.substitutions?.headerCwd ?? 0) > 0 && typeof header.cwd === 'string' && header.cwd.includes('{{cwd}}')) {
    header.cwd = header.cwd.replace('{{cwd}}', CWD_STANDIN);
    changed = true;
  }
  for (const f of fill) {
    if (!(f in header)) {
      header[f] = 0;
      changed = true;
    }
  }
  // `"tools":"{{tools}}"` needs no substitution: placeholders load with a warning here.
  return changed ? JSON.stringify(header) + text.slice(nl) : text;
}

export function ourVerdict(text: string, file: string): Verdict {
  try {
    const loaded = loadJsonl(text, { file, placeholders: 'warn' });
    return { ok: true, messages: loaded.session.deriveMessages().toArray() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

function judge(ours: Verdict, theirs: OracleVerdict): { verdict: boolean; messages: boolean | undefined } {
  const verdict = ours.ok === theirs.ok;
  const messages = verdict && ours.ok ? deepEqual(ours.messages, theirs.derivedMessages) : undefined;
  return { verdict, messages };
}

const say = (v: { ok: boolean }): string => (v.ok ? 'accepts' : 'refuses');
const clip = (s: string | undefined, n = 160): string => (s === undefined ? '' : s.length > n ? `${s.slice(0, n)}…` : s);

export function compareLog(name: string, text: string, oracle: OracleFile): LogAgreement {
  const ours = ourVerdict(prepareText(text, oracle), name);
  const main = judge(ours, oracle);
  let detail = `dsh ${say(oracle)}, ours ${say(ours)}`;
  if (!main.verdict) detail += ` (${clip(ours.ok ? oracle.error : ours.error)})`;
  else if (main.messages === false) detail += ': derived messages differ';
  const out: LogAgreement = {
    name,
    verdict: main.verdict,
    messages: main.messages,
    agrees: main.verdict && main.messages !== false,
    detail,
  };
  const filled = oracle.withHeaderFilled;
  if (!oracle.ok && filled !== undefined) {
    const ours2 = ourVerdict(prepareText(text, oracle, filled.headerFieldsAdded), name);
    const f = judge(ours2, filled);
    out.filled = f;
    out.agrees &&= f.verdict && f.messages !== false;
    out.detail += `; header filled (${filled.headerFieldsAdded.join(', ') || 'nothing'}): dsh ${say(filled)}, ours ${say(ours2)}`;
    if (!f.verdict) out.detail += ` (${clip(ours2.ok ? filled.error : ours2.error)})`;
    else if (f.messages === false) out.detail += ': derived messages differ';
  }
  return out;
}

export interface CompatReport {
  logs: LogAgreement[];
  /** Logs in the fixture folder without an oracle file (not counted). */
  unmatched: string[];
}

export function compareFolders(fixtureDir: string, oracleDir: string): CompatReport {
  const logs: LogAgreement[] = [];
  const unmatched: string[] = [];
  for (const name of readdirSync(fixtureDir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    const oraclePath = join(oracleDir, name.replace(/\.jsonl$/, '.json'));
    if (!existsSync(oraclePath)) {
      unmatched.push(name);
      continue;
    }
    const oracle = JSON.parse(readFileSync(oraclePath, 'utf8')) as OracleFile;
    logs.push(compareLog(name, readFileSync(join(fixtureDir, name), 'utf8'), oracle));
  }
  return { logs, unmatched };
}

export function formatReport(r: CompatReport, fixtureDir: string): string {
  const lines: string[] = [];
  for (const l of r.logs) lines.push(`${l.agrees ? 'agree   ' : 'DISAGREE'} ${l.name}: ${l.detail}`);
  for (const u of r.unmatched) lines.push(`no oracle ${u}`);
  const n = r.logs.length;
  const verdicts = r.logs.filter((l) => l.verdict).length;
  const accepted = r.logs.filter((l) => l.messages !== undefined);
  const same = accepted.filter((l) => l.messages).length;
  const filled = r.logs.filter((l) => l.filled !== undefined);
  const filledOk = filled.filter((l) => l.filled!.verdict && l.filled!.messages !== false).length;
  lines.push('');
  lines.push(`${basename(fixtureDir)}: ${r.logs.filter((l) => l.agrees).length}/${n} logs agree with the oracle`);
  lines.push(`  verdicts: ${verdicts}/${n}; derived messages where both accept: ${same}/${accepted.length}`);
  if (filled.length > 0) lines.push(`  dsh refusals with the header filled in: ${filledOk}/${filled.length} agree (verdict and messages)`);
  if (r.unmatched.length > 0) lines.push(`  ${r.unmatched.length} log(s) without an oracle file were skipped`);
  return lines.join('\n');
}

function main(argv: string[]): number {
  const [fixtureDir, oracleDir] = argv;
  if (fixtureDir === undefined || oracleDir === undefined) {
    process.stderr.write('usage: npm run compat -- FIXTURE_DIR ORACLE_DIR\n');
    return 2;
  }
  const report = compareFolders(fixtureDir, oracleDir);
  process.stdout.write(`${formatReport(report, fixtureDir)}\n`);
  return report.logs.every((l) => l.agrees) ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.slice(2));
