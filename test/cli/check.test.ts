/**
 * `dsh log check`: verdicts, exit codes, and problems located by file, line, seq and rule, on the
 * example log and on inputs broken in each way the brief lists.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplePath, exampleLines, exampleText, lineOf, scratch } from './support/files.js';
import { parseRaw } from './support/raw-log.js';
import { dsh as dshProcess } from './support/run.js';
import { dshIn as dsh } from './support/inproc.js';

const file = scratch();

interface Report {
  ok: boolean;
  strict: boolean;
  files: {
    file: string;
    ok: boolean;
    verdict: string;
    summary: {
      events: number;
      rows: number;
      turns: number;
      steps: number;
      messages: number;
      repairedEvents: number;
      tornTail: { line: number } | null;
    } | null;
    problems: { severity: string; code: string; message: string; line?: number; seq?: number; rule?: string }[];
  }[];
}

async function checkJson(...args: string[]): Promise<{ code: number | null; report: Report }> {
  const r = await dsh(['log', 'check', '--json', ...args]);
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
}

describe('dsh log check on the example', () => {
  it('passes with a summary counted from the log', async () => {
    const { events } = parseRaw(exampleText());
    const r = await dsh(['log', 'check', examplePath]);
    expect(r.code).toBe(0);
    const turns = events.filter((e) => e.type === 'turn/start').length;
    const steps = events.filter((e) => e.type === 'step/start').length;
    const rows = exampleLines().length - 1;
    expect(r.stdout.trim()).toMatch(
      new RegExp(`^.*fix-typo\\.jsonl: ok · ${events.length} events in ${rows} rows · ${turns} turns · ${steps} steps · \\d+ messages$`),
    );
  });

  it('--json reports the same facts', async () => {
    const { events } = parseRaw(exampleText());
    const surface = events.filter(
      (e) => e.surfaceOp === 'append' && !(e.type === 'assistant/message' && e.data.message.content.length === 0),
    );
    const { code, report } = await checkJson(examplePath);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.files[0]).toMatchObject({
      ok: true,
      verdict: 'ok',
      problems: [],
      summary: { events: events.length, turns: 2, steps: 6, messages: surface.length, repairedEvents: 0, tornTail: null },
    });
  });

  it('reads standard input with -', async () => {
    const r = await dshProcess(['log', 'check', '-'], { input: exampleText() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^<stdin>: ok · /);
  });

  it('reads a named pipe (as from <(…)) once, whole, rather than streaming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-fifo-'));
    try {
      const fifo = join(dir, 'log.fifo');
      execFileSync('mkfifo', [fifo]);
      // The writer blocks until the CLI opens the pipe; a second open would find it drained.
      const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', examplePath, fifo], { stdio: 'ignore' });
      const written = new Promise((resolve) => writer.on('exit', resolve));
      const r = await dshProcess(['log', 'check', fifo]);
      expect(await written).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/log\.fifo: ok · \d+ events/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dsh log check on broken input', () => {
  it('a torn tail after the last turn/end is a warning with its line; --strict fails on it', async () => {
    const lines = exampleLines();
    const p = file('torn.jsonl', `${exampleText()}{"type":"turn/start","seq":191,"ti`);
    const r = await dsh(['log', 'check', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${p}:${lines.length + 1}: warning TORN_TAIL`);
    expect(r.stdout).toMatch(/: ok · .*torn tail at line \d+ · 1 warning$/m);
    const strict = await dsh(['log', 'check', '--strict', p]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('FAILED (--strict: warnings fail)');
  });

  it('a log cut inside a turn loads with crash repair reported', async () => {
    const lines = exampleLines();
    const cut = lineOf(lines, /"type":"tool\/call".*call_04_read/);
    const p = file('cut.jsonl', `${lines.slice(0, cut).join('\n')}\n${lines[cut]!.slice(0, 40)}`);
    const { code, report } = await checkJson(p);
    expect(code).toBe(0);
    const f = report.files[0]!;
    expect(f.problems.map((x) => x.code)).toEqual(['TORN_TAIL', 'OPEN_TURN']);
    expect(f.problems[0]!.line).toBe(cut + 1);
    // The recorded call gets an outcome-unknown result, then step/end and turn/end.
    expect(f.summary!.repairedEvents).toBe(3);
  });

  it('a corrupt line in the middle fails with its line number', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"tool\/call".*call_02_read/);
    lines[n - 1] = '{"type":"tool/call","seq":';
    const p = file('corrupt.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'check', p]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${p}:${n}: error CORRUPT_LOG (rule storage): corrupt session log: line is not JSON`);
    expect(r.stdout.trim().split('\n').at(-1)).toBe(`${p}: FAILED`);
  });

  it('a seq gap fails at the line after the gap', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"step\/end"/);
    lines.splice(n - 1, 1);
    const p = file('gap.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'check', p]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`:${n}: error CORRUPT_LOG .*seq gap: expected \\d+, got \\d+`));
  });

  it('a wrongly typed field fails with line, seq, rule and JSON path', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"turn\/start"/);
    const seq = (JSON.parse(lines[n - 1]!) as { seq: number }).seq;
    lines[n - 1] = lines[n - 1]!.replace('"turn":1', '"turn":"1"');
    const p = file('types.jsonl', `${lines.join('\n')}\n`);
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(report.files[0]!.problems).toEqual([
      expect.objectContaining({ severity: 'error', code: 'INVALID_EVENT', line: n, seq, rule: 'event-shape', path: '$.data.turn' }),
    ]);
    const human = await dsh(['log', 'check', p]);
    expect(human.stdout).toContain(
      `${p}:${n}: error INVALID_EVENT (seq ${seq}, rule event-shape): event "turn/start" at seq ${seq} is invalid at $.data.turn`,
    );
  });

  it('a trace violation names the rule', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"step\/start".*"step":2/);
    lines[n - 1] = lines[n - 1]!.replace('"step":2', '"step":5');
    const p = file('trace.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'check', p]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(`:${n}: error TRACE_VIOLATION \\(seq \\d+, rule [\\w-]+\\): .*the next step of turn 1 is 2, not 5`),
    );
  });

  it('a {{cwd}} placeholder is a warning on line 1, an error under --strict', async () => {
    const p = file('placeholder.jsonl', exampleText().replace('"cwd":"/tmp/demo-repo"', '"cwd":"{{cwd}}"'));
    const r = await dsh(['log', 'check', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${p}:1: warning PLACEHOLDER: header has the placeholder {{cwd}} at $.cwd`);
    expect((await dsh(['log', 'check', '--strict', p])).code).toBe(1);
    const quiet = await dsh(['log', 'check', '-q', p]);
    expect(quiet.stdout).not.toContain('warning PLACEHOLDER');
    expect(quiet.stdout).toContain(': ok · ');
  });

  const oneLineFailure = async (path: string, code: string, message: RegExp, line?: number): Promise<void> => {
    const r = await dsh(['log', 'check', path]);
    expect(r.code).toBe(1);
    const out = r.stdout.trim().split('\n');
    expect(out).toHaveLength(2); // the problem, then the verdict
    expect(out[0]).toMatch(
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${line !== undefined ? `:${line}` : ''}: error ${code}: `),
    );
    expect(out[0]).toMatch(message);
    expect(r.stderr).toBe('');
    const { report } = await checkJson(path);
    expect(report.files[0]!.problems[0]!.code).toBe(code);
  };

  it('a missing file is one line, not a crash', async () => {
    await oneLineFailure(join(examplePath, '..', 'no-such-log.jsonl'), 'FILE_NOT_FOUND', /no such file/);
  });

  it('a directory is one line', async () => {
    const dir = join(file('dir-marker', ''), '..', 'a-dir');
    mkdirSync(dir);
    await oneLineFailure(dir, 'NOT_A_FILE', /is a directory/);
  });

  it('a binary file is one line', async () => {
    await oneLineFailure(
      file('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])),
      'BINARY_FILE',
      /binary data \(a NUL byte at offset 8\)/,
      3,
    );
  });

  it('an empty file is one line', async () => {
    await oneLineFailure(file('empty.jsonl', ''), 'EMPTY_FILE', /the file is empty/, 1);
  });

  it('a non-log text file fails at line 1', async () => {
    const r = await dsh(['log', 'check', file('notes.txt', 'hello\nworld\n')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /notes\.txt:1: error CORRUPT_LOG \(rule storage\): corrupt session log: the first line is not a session header/,
    );
  });

  it('checks every file, exits 1 if any fails, and totals', async () => {
    const bad = file('bad.jsonl', 'not a log\n');
    const r = await dsh(['log', 'check', examplePath, bad, examplePath]);
    expect(r.code).toBe(1);
    const out = r.stdout.trim().split('\n');
    expect(out.filter((l) => /: ok · /.test(l))).toHaveLength(2);
    expect(out.at(-1)).toBe('3 files: 2 ok, 1 failed');
  });
});
