/**
 * Logs arriving on standard input or a pipe are read once, as they come, like files are streamed:
 * a writer that is slow or sends in parts is waited for (standard input may be non-blocking, and
 * EAGAIN is not the end), the first bytes are checked as a file's are, and devices are refused
 * instead of read forever. Real processes and real pipes, each with a deadline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtBin } from './support/run.js';
import { examplePath, exampleLines } from './support/files.js';
import { tempDir } from './support/agent.js';

const sh = (script: string) =>
  spawnSync('sh', ['-c', script], {
    env: { ...process.env, DSH: `${process.execPath} ${builtBin()}`, LOG: examplePath, DSH_HOME: tempDir(), NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });

/** What `dsh log check` says of the example read as a file (the reference for the piped reads). */
const fileVerdict = (): string => sh('$DSH log check "$LOG"').stdout.replace(examplePath, '<stdin>');

describe('a log on standard input', () => {
  it('from a writer that starts late is waited for, not refused with EAGAIN', () => {
    const r = sh('(sleep 1; cat "$LOG") | $DSH log check -');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(fileVerdict());
  });

  it('sent in parts with pauses between them loads whole: every command reading it sees the full log', () => {
    const split = Math.floor(exampleLines().length / 2);
    const parts = `(head -n ${split} "$LOG"; sleep 0.5; tail -n +${split + 1} "$LOG")`;
    const check = sh(`${parts} | $DSH log check -`);
    expect(check.status).toBe(0);
    expect(check.stdout).toBe(fileVerdict());
    const messages = sh(`${parts} | $DSH log messages --json -`);
    expect(messages.status).toBe(0);
    expect(JSON.parse(messages.stdout)).toEqual(JSON.parse(sh('$DSH log messages --json "$LOG"').stdout));
  });

  it('a process substitution (a pipe by path) is read the same way', () => {
    const r = spawnSync('bash', ['-c', '$DSH log check <(sleep 0.5; cat "$LOG")'], {
      env: { ...process.env, DSH: `${process.execPath} ${builtBin()}`, LOG: examplePath, DSH_HOME: tempDir() },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\/dev\/fd\/\d+: ok · 191 events/);
  });

  it('endless NUL bytes on standard input are refused as binary from the first chunk', () => {
    if (!existsSync('/dev/zero')) return;
    const r = sh('$DSH log check - < /dev/zero');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('<stdin>:1: error BINARY_FILE: binary data (a NUL byte at offset 0), not a JSONL session log\n<stdin>: FAILED\n');
  });
});

describe('a device given as the log', () => {
  it('is refused at once (reading /dev/zero would never end)', () => {
    if (!existsSync('/dev/zero')) return;
    const r = sh('$DSH log check /dev/zero; $DSH log show /dev/zero');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('/dev/zero: error NOT_A_FILE: is a device, not a log file\n/dev/zero: FAILED\n');
    expect(r.stderr).toBe('dsh: /dev/zero: is a device, not a log file [NOT_A_FILE]\n');
  });
});

describe('what was not loaded as written is said by every command that reads a log', () => {
  it('a torn tail and crash repair: a warning on stderr from log messages, replay and export; all load warnings in --json', async () => {
    const { runMain } = await import('./support/inproc.js');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const lines = exampleLines();
    // Cut the last turn short: its last line torn, the turn left open.
    const torn = join(tempDir(), 'torn.jsonl');
    writeFileSync(torn, `${lines.slice(0, -3).join('\n')}\n${lines.at(-3)!.slice(0, 25)}`);
    const tornLine = lines.length - 2;
    const want = [
      `warning: ${torn}: torn tail at line ${tornLine}: 1 line not loaded (the last line is incomplete (no newline, not JSON)) [TORN_TAIL]`,
      `warning: ${torn}: the last turn was left open; crash repair added 2 events [OPEN_TURN]`,
    ];
    const messages = await runMain(['log', 'messages', '--brief', torn], {});
    expect(messages.code).toBe(0);
    expect(messages.stderr.split('\n').filter(Boolean)).toEqual(want);
    const replay = await runMain(['replay', torn], {});
    expect(replay.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toEqual(want);
    const json = JSON.parse((await runMain(['replay', '--json', torn], {})).stdout) as { loadWarnings: { code: string; line?: number }[] };
    expect(json.loadWarnings.map((w) => w.code)).toEqual(['TORN_TAIL', 'OPEN_TURN']);
    expect(json.loadWarnings[0]!.line).toBe(tornLine);
  });
});
