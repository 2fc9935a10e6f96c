/**
 * The executable itself: help, version, usage errors and exit statuses, colour rules, debug
 * traces, and the shim's message when the build is missing. Help and usage errors are decided in
 * `main()` and run in this process; version, colour, traces and the shim need the real binary.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { examplePath, scratch } from './support/files.js';
import { dsh } from './support/run.js';
import { dshIn } from './support/inproc.js';

const file = scratch();
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };

describe('dsh', () => {
  it('package.json points the dsh bin at bin/dsh.js', () => {
    expect(pkg.bin.dsh).toBe('bin/dsh.js');
    expect(readFileSync(join(repoRoot, 'bin', 'dsh.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('--version prints the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await dsh([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
    }
  });

  it('--help works at every level and documents exit statuses', async () => {
    const top = await dshIn(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: dsh \[options\] \[command\]/);
    expect(top.stdout).toContain('Exit status: 0 ok; 1 problems found or the command failed; 2 usage error.');
    const log = await dshIn(['log', '--help']);
    expect(log.code).toBe(0);
    for (const c of ['check', 'show', 'messages']) expect(log.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    const check = await dshIn(['log', 'check', '--help']);
    expect(check.stdout).toContain('--strict');
    expect(check.stdout).toContain('Exit status: 0 when every file loads');
    expect((await dshIn(['log', 'show', '-h'])).stdout).toContain('--turn <n>');
    expect((await dshIn(['log', 'messages', '--help'])).stdout).toContain('--at <seq>');
    for (const c of ['run', 'chat', 'replay', 'sessions', 'log', 'config']) expect(top.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    const run = await dshIn(['run', '--help']);
    for (const o of ['--resume <id>', '--continue', '--full-auto', '--allow <rule>', '--json', '--quiet', '--no-persist'])
      expect(run.stdout).toContain(o);
    expect(run.stdout).toContain('130 after\nCtrl-C (SIGINT); 143 after SIGTERM.');
    const chat = (await dshIn(['chat', '--help'])).stdout;
    expect(chat).toContain('/fork [SEQ]');
    // chat alone can pick a session from a list, so only its id is optional.
    expect(chat).toContain('--resume [id]');
    expect((await dshIn(['replay', '--help'])).stdout).toContain('--live-tools');
    expect((await dshIn(['sessions', '--help'])).stdout).toMatch(/^ {2}path /m);
  });

  it('usage errors exit 2 with one line on stderr', async () => {
    const cases: [string[], RegExp][] = [
      [['log', 'check'], /^dsh: error: missing required argument 'file' \(add --help for usage\)$/],
      [['log', 'show', '--bogus', examplePath], /^dsh: error: unknown option '--bogus' \(add --help for usage\)$/],
      [['log', 'frobnicate'], /^dsh: error: unknown command 'frobnicate' \(add --help for usage\)$/],
      [
        ['log', 'show', '--turn', '0', examplePath],
        /^dsh: error: option '--turn <n>' argument '0' is invalid\. expected a turn number \(an integer ≥ 1\) \(add --help for usage\)$/,
      ],
      [
        ['log', 'show', examplePath, examplePath],
        /^dsh: error: too many arguments for 'show'\. Expected 1 argument but got 2\. \(add --help for usage\)$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await dshIn(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
  });

  it('a command group without a subcommand prints its help and exits 2', async () => {
    for (const argv of [[], ['log']]) {
      const r = await dshIn(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Usage: dsh /);
    }
  });

  it('failures are one line without a stack trace; DSH_DEBUG=1 adds it', async () => {
    const missing = join(repoRoot, 'no-such.jsonl');
    const plain = await dsh(['log', 'show', missing]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe(`dsh: ${missing}: no such file [FILE_NOT_FOUND]\n`);
    const debug = await dsh(['log', 'show', missing], { env: { DSH_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^CliError: no such file\n\s+at /);
    expect(debug.stderr.trimEnd().split('\n').at(-1)).toBe(`dsh: ${missing}: no such file [FILE_NOT_FOUND]`);
  });

  it('colours only when asked: NO_COLOR and pipes get plain text, FORCE_COLOR gets styles', async () => {
    const plain = await dsh(['log', 'show', examplePath], { env: { NO_COLOR: '1' } });
    expect(plain.rawOut.includes(0x1b)).toBe(false);
    const piped = await dsh(['log', 'show', examplePath], { env: { NO_COLOR: undefined } });
    expect(piped.rawOut.includes(0x1b)).toBe(false);
    const forced = await dsh(['log', 'show', examplePath], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\x1b[1m');
    // Styling changes nothing but the escapes.
    expect(forced.stdout.replace(/\x1b\[\d+m/g, '')).toBe(plain.stdout);
  });

  it('the shim says to build when dist/ is missing', async () => {
    const root = join(file('marker', ''), '..', 'unbuilt');
    mkdirSync(join(root, 'bin'), { recursive: true });
    copyFileSync(join(repoRoot, 'bin', 'dsh.js'), join(root, 'bin', 'dsh.js'));
    const r = await dsh(['--version'], { bin: join(root, 'bin', 'dsh.js') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('dsh: the CLI is not built (dist/cli/main.js is missing): run npm run build\n');
  });
});
