/**
 * What the conformance runners share about a scenario folder in dsh's snapshot layout (see the
 * README of ../shared/fixtures/dsh-acp): its recorded logs, its workspace, the prompt, and a run
 * of `dsh` as a real child process in a fresh temporary home and a copy of the workspace.
 *
 * Recorded logs hold `{{cwd}}` where the recording's workspace was; each run writes a copy with
 * the run's own workspace in its place, and the model's replies are served from that copy by
 * `--replay-model` (the tools run for real).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  ...(import.meta.url.includes('/dist-scripts/') ? ['..'] : []),
);
export const DSH_BIN = join(REPO_ROOT, 'bin', 'dsh.js');

/** The scenario folders under `dir` (every subfolder), sorted by name. */
export function scenarioDirs(dir: string): string[] {
  // Absolute: the runs' dsh processes start in scratch workspaces and are handed these files.
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => resolve(dir, d.name))
    .sort();
}

export interface JsonLine {
  line: number;
  value: unknown;
}

/** The JSON lines of a file (blank lines skipped); a bad line throws naming file and line. */
export function readJsonLines(file: string): unknown[] {
  const out: unknown[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      try {
        out.push(JSON.parse(text));
      } catch (e) {
        throw new Error(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
      }
    });
  return out;
}

export interface LogRecord {
  type: string;
  seq?: number;
  data?: Record<string, unknown>;
  [k: string]: unknown;
}

/** A run's scratch space: the workspace copy, a dsh home, and the recorded logs made concrete. */
export interface Sandbox {
  root: string;
  cwd: string;
  home: string;
  dispose(): void;
}

export function makeSandbox(scenario: string): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-conformance-')));
  const cwd = join(root, 'workspace');
  const home = join(root, 'home');
  const ws = join(scenario, 'workspace');
  if (existsSync(ws)) cpSync(ws, cwd, { recursive: true });
  else mkdirSync(cwd);
  mkdirSync(home);
  return { root, cwd, home, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * `file` with `{{cwd}}` replaced by the run's workspace, written into the sandbox. Recordings
 * from before dsh wrote `delegationDepth` in the header get it (0: a top-level session), which
 * our loader requires; only the recorded streams are read from the copy.
 */
export function concreteLog(file: string, box: Sandbox, name: string): string {
  const out = join(box.root, name);
  const lines = readFileSync(file, 'utf8').split('{{cwd}}').join(box.cwd).split('\n');
  try {
    const header = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    if (header.type === 'session' && header.delegationDepth === undefined) lines[0] = JSON.stringify({ ...header, delegationDepth: 0 });
  } catch {
    // not JSON: dsh refuses the copy and says why
  }
  writeFileSync(out, lines.join('\n'));
  return out;
}

/** The records of a JSONL session log (header first), for reading prompts and tool names. */
export function logRecords(file: string): LogRecord[] {
  return readJsonLines(file) as LogRecord[];
}

/** The text of the first prompt a log's inbox received (or its first user message). */
export function firstPrompt(records: readonly LogRecord[]): { text: string; content: unknown[] } | undefined {
  for (const r of records) {
    if (r.type === 'agent/inbox/spliced') {
      const inserted = (r.data?.inserted as { content?: unknown[] }[] | undefined) ?? [];
      const m = inserted[0];
      if (m?.content) return { text: textOf(m.content), content: m.content };
    }
    if (r.type === 'user/message' && (r.data?.source as { kind?: string } | undefined)?.kind === 'user') {
      const content = (r.data?.content as unknown[]) ?? [];
      return { text: textOf(content), content };
    }
  }
  return undefined;
}

function textOf(content: readonly unknown[]): string {
  return content
    .flatMap((b) =>
      typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'text' ? [(b as { text: string }).text] : [],
    )
    .join('\n');
}

/** Tool names a log's model called. */
export function calledTools(records: readonly LogRecord[]): string[] {
  const names = new Set<string>();
  for (const r of records) if (r.type === 'tool/call' && typeof r.data?.name === 'string') names.add(r.data.name);
  return [...names];
}

/** The environment a run gets: no provider keys, no model choice, a fresh home. */
export function runEnv(box: Sandbox): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: box.home,
    DSH_HOME: join(box.home, '.dsh'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  };
}

export interface Child {
  /** Write one line to the child's standard input. */
  send(line: string): void;
  endInput(): void;
  /** Resolves with the first stdout line (from index `from`, default 0) for which `test` holds. */
  waitFor(test: (value: unknown) => boolean, what: string, from?: number): Promise<unknown>;
  /** Every stdout line so far, parsed (a non-JSON line is kept as its text). */
  readonly lines: unknown[];
  readonly stderr: () => string;
  /** Resolves with the exit status once the child has exited (killed after `timeoutMs`). */
  exited: Promise<number | null>;
  /** Send a signal (default SIGKILL). */
  kill(signal?: NodeJS.Signals): void;
}

/** `dsh ARGS` as a child process, stdout read as JSON lines. */
export function spawnDsh(args: readonly string[], box: Sandbox, timeoutMs: number): Child {
  const child = spawn(process.execPath, [DSH_BIN, ...args], { cwd: box.cwd, env: runEnv(box), stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: unknown[] = [];
  const waiters: {
    test: (v: unknown) => boolean;
    resolve: (v: unknown) => void;
    reject: (e: Error) => void;
    what: string;
    from: number;
  }[] = [];
  let err = '';
  let buf = '';
  const check = (): void => {
    for (const w of [...waiters]) {
      for (let i = w.from; i < lines.length; i++) {
        if (w.test(lines[i])) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(lines[i]);
          break;
        }
      }
    }
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (text.trim() === '') continue;
      try {
        lines.push(JSON.parse(text));
      } catch {
        lines.push(text);
      }
    }
    check();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (err.length < 64 * 1024) err += d;
  });
  child.stdin.on('error', () => {});
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<number | null>((res) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      for (const w of waiters.splice(0))
        w.reject(new Error(`dsh exited (${code ?? 'killed'}) before ${w.what}; stderr: ${err.slice(-400)}`));
      res(code);
    });
  });
  return {
    send: (line) => child.stdin.write(`${line}\n`),
    endInput: () => child.stdin.end(),
    waitFor: (test, what, from = 0) =>
      new Promise((res, rej) => {
        waiters.push({ test, resolve: res, reject: rej, what, from });
        check();
        if (child.exitCode !== null) rej(new Error(`dsh exited before ${what}`));
      }),
    lines,
    stderr: () => err,
    exited,
    kill: (signal = 'SIGKILL') => void child.kill(signal),
  };
}

/** One scenario's verdict, as the runners print it. */
export interface ScenarioResult {
  name: string;
  pass: boolean;
  /** Expected messages matched in order, of the total. */
  matched: number;
  total: number;
  /** What differed (first difference), empty when passing. */
  detail: string[];
  /** Features this harness lacks that the scenario uses (derived from its files and our output). */
  needs: string[];
}

/** `N/M` and one block per failure. */
export function report(results: readonly ScenarioResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    out.push(`${r.pass ? 'PASS' : 'FAIL'} ${r.name} (${r.matched}/${r.total} messages in order)`);
    if (!r.pass) {
      for (const d of r.detail) out.push(`  ${d}`);
      if (r.needs.length > 0) out.push(`  needs: ${r.needs.join('; ')}`);
    }
  }
  const passed = results.filter((r) => r.pass).length;
  out.push(`${passed}/${results.length} scenarios pass`);
  return out;
}
