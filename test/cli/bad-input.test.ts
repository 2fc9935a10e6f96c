/**
 * Hostile and mistaken input across the commands: each ends with one precise line on stderr, the
 * documented exit status and no stack trace.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { helpLines } from '../../src/cli/chat/commands.js';
import { describe, expect, it } from 'vitest';
import { runMain } from './support/inproc.js';
import { builtBin } from './support/run.js';
import { exampleLines, examplePath, scratch } from './support/files.js';
import { agentEnv, tempDir } from './support/agent.js';

const file = scratch();

describe('DSH_HOME that cannot hold sessions', () => {
  const homeIsFile = (): { home: string; cwd: string } => {
    const dir = tempDir();
    const home = join(dir, 'home');
    writeFileSync(home, 'not a directory\n');
    return { home, cwd: tempDir() };
  };

  it('a file as DSH_HOME is one line naming it, for every command that uses the store', async () => {
    const { home, cwd } = homeIsFile();
    const want = `dsh: DSH_HOME (${home}) cannot be used: ${home} is not a directory; point DSH_HOME at a directory [HOME_UNUSABLE]\n`;
    const env = agentEnv('http://127.0.0.1:9', home);
    for (const argv of [
      ['sessions'],
      ['sessions', 'path', 'abcd'],
      ['log', 'show', 'abcd'],
      ['replay', 'abcd'],
      ['run', '--cwd', cwd, 'hi'],
      ['run', '--cwd', cwd, '--continue', 'hi'],
    ]) {
      const r = await runMain(argv, env);
      expect(r.stderr, argv.join(' ')).toBe(want);
      expect(r.code, argv.join(' ')).toBe(1);
    }
  });

  it('a DSH_HOME under a file names the file', async () => {
    const { home, cwd } = homeIsFile();
    const r = await runMain(['run', '--cwd', cwd, 'hi'], agentEnv('http://127.0.0.1:9', join(home, 'sub')));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `dsh: DSH_HOME (${join(home, 'sub')}) cannot be used: ${home} is not a directory; point DSH_HOME at a directory [HOME_UNUSABLE]\n`,
    );
  });

  it('a DSH_HOME that cannot be created fails before the model is called', () => {
    // /proc refuses new entries (and sends Node's recursive mkdir into an endless loop).
    if (!existsSync('/proc/self')) return;
    // A child with a deadline, so a regression fails instead of hanging the suite.
    const cwd = tempDir();
    const r = spawnSync(process.execPath, [builtBin(), 'run', '--cwd', cwd, 'hi'], {
      env: { ...process.env, ...agentEnv('http://127.0.0.1:9', '/proc/dsh-no-such-home') },
      input: '',
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^dsh: DSH_HOME \(\/proc\/dsh-no-such-home\) cannot be used: cannot create \/proc\/dsh-no-such-home: \w+ \[HOME_UNUSABLE\]\n$/,
    );
  });
});

describe('dsh replay of a log that does not load', () => {
  it('names the file and line, like dsh log does', async () => {
    const lines = exampleLines();
    lines[29] = '{not json';
    const path = file('corrupt-line-30.jsonl', `${lines.join('\n')}\n`);
    const r = await runMain(['replay', path], {});
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`^dsh: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:30: error CORRUPT_LOG \\(rule storage\\): `));
  });
});

describe('dsh log on a file with a line longer than a string can hold', () => {
  it('is FILE_TOO_LARGE in one line, as when the file was read whole (not an internal error)', async () => {
    // About 576 MiB on line 2: more characters than one V8 string may have.
    const path = file('huge-line.jsonl', '');
    const fd = openSync(path, 'w');
    try {
      writeSync(fd, `${exampleLines()[0]}\n{"type":"turn/start","seq":0,"time":0,"data":{"turn":1},"x":"`);
      const chunk = Buffer.alloc(64 << 20, 0x61);
      for (let i = 0; i < 9; i++) writeSync(fd, chunk);
      writeSync(fd, '"}\n');
    } finally {
      closeSync(fd);
    }
    try {
      const r = await runMain(['log', 'show', path], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`dsh: ${path}: line 2 is too long to decode as one string (over about 512 MiB) [FILE_TOO_LARGE]\n`);
    } finally {
      rmSync(path);
    }
  }, 120_000);
});

describe('dsh replay --out that cannot be written', () => {
  it('fails before the replay runs, naming the flag and the path', async () => {
    const dir = tempDir();
    const cases: [string, string][] = [
      [dir, 'is a directory; name a file to write the replayed log to'],
      [join(dir, 'missing', 'out.jsonl'), `no such directory ${join(dir, 'missing')}`],
    ];
    for (const [out, why] of cases) {
      const r = await runMain(['replay', '--out', out, examplePath], {});
      expect(r.code, out).toBe(1);
      expect(r.stdout, out).toBe('');
      expect(r.stderr, out).toBe(`dsh: ${out}: --out: ${why} [WRITE_FAILED]\n`);
    }
  });
});

describe('dsh view of something that is not a log file', () => {
  it('refuses it as dsh log does, before a server starts', async () => {
    const dir = tempDir();
    const garbage = Buffer.alloc(64, 0x41);
    garbage[10] = 0;
    const cases: [string, string][] = [
      [join(dir, 'missing.jsonl'), 'no such file [FILE_NOT_FOUND]'],
      [dir, 'is a directory; pass the log files inside it (e.g. dir/*.jsonl) [NOT_A_FILE]'],
      [file('empty.jsonl', ''), 'the file is empty; a dsh log starts with a session header line [EMPTY_FILE]'],
      [file('garbage.bin', garbage), 'binary data (a NUL byte at offset 10), not a JSONL session log [BINARY_FILE]'],
      ['/dev/null', 'is a pipe or device, not a regular file; save the log to a file first [NOT_A_FILE]'],
    ];
    for (const [path, why] of cases) {
      const r = await runMain(['view', path], {});
      expect(r.code, path).toBe(1);
      expect(r.stdout, path).toBe('');
      expect(r.stderr, path).toBe(`dsh: ${path}: ${why}\n`);
    }
    const stdin = await runMain(['view', '-'], {});
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toBe(
      'dsh: dsh view follows a file as it grows, so it cannot read standard input; save the log to a file first [USAGE]\n',
    );
  });
});

describe('dsh log export with a bad endpoint or header', () => {
  it('is a usage error naming the flag, decided before the log is read', async () => {
    const missing = join(tempDir(), 'missing.jsonl');
    const cases: [string[], string][] = [
      [
        ['--otlp', 'notaurl'],
        "dsh: error: option '--otlp <url>' argument 'notaurl' is invalid. expected an http(s) URL, e.g. " +
          'http://localhost:4318/v1/traces (add --help for usage)\n',
      ],
      [
        ['--otlp', 'ftp://host/v1/traces'],
        "dsh: error: option '--otlp <url>' argument 'ftp://host/v1/traces' is invalid. expected an http(s) URL, e.g. " +
          'http://localhost:4318/v1/traces (add --help for usage)\n',
      ],
      [
        ['--otlp', 'http://127.0.0.1:9/v1/traces', '-H', 'nonsense'],
        "dsh: error: option '-H, --header <name=value>' argument 'nonsense' is invalid. expected NAME=VALUE (add --help for usage)\n",
      ],
    ];
    for (const [flags, want] of cases) {
      const r = await runMain(['log', 'export', ...flags, missing], {});
      expect(r.stderr, flags.join(' ')).toBe(want);
      expect(r.code, flags.join(' ')).toBe(2);
    }
  });
});

describe('options that cannot go together', () => {
  it('are a usage error naming both, not one silently ignored', async () => {
    const cases: [string[], string][] = [
      [
        ['sessions', 'list', '--all', '--cwd', tempDir()],
        'dsh: --all lists every workspace and --cwd names one; give one of them [USAGE]\n',
      ],
      [
        ['log', 'messages', '--json', '--brief', examplePath],
        'dsh: --json prints the exact message objects and --brief a short text view; give one of them [USAGE]\n',
      ],
    ];
    for (const [argv, want] of cases) {
      const r = await runMain(argv, { DSH_HOME: tempDir() });
      expect(r.stderr, argv.join(' ')).toBe(want);
      expect(r.stdout, argv.join(' ')).toBe('');
      expect(r.code, argv.join(' ')).toBe(2);
    }
  });
});

describe('--help says what the command does', () => {
  it('chat lists every slash command and every exit status', async () => {
    const r = await runMain(['chat', '--help'], {});
    expect(r.code).toBe(0);
    for (const c of ['/help', '/session', '/cancel', '/compact', '/fork [SEQ]', '/model provider:model', '/exit', '/quit'])
      expect(r.stdout, c).toContain(c);
    expect(r.stdout).toMatch(/2 usage\s+error; 130 after a second Ctrl-C/);
    // The screen's keys are described, not only the line protocol (issue 15 review, finding 10).
    for (const c of ['/resume [ID]', 'Shift+Enter', 'Alt+Enter', 'trailing \\', 'Tab completes', '@path', 'Ctrl-O', '1 (y) allow once'])
      expect(r.stdout, c).toContain(c);
    expect(r.stdout).toMatch(/On a pipe, with TERM=dumb, or with --line: the line protocol/);
  });

  it("chat's /help fits 80 columns, and says what /fork with no SEQ does where it runs", () => {
    for (const onScreen of [true, false]) for (const l of helpLines(onScreen)) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(helpLines(true).join('\n')).toMatch(/\/fork \[SEQ\].*\n.*no SEQ: pick a turn end from a list/);
    expect(helpLines(false).join('\n')).toMatch(/\/fork \[SEQ\].*\n.*no SEQ: fork now/);
    expect(helpLines(true).join('\n')).toContain('/resume [ID]');
  });

  it('config show has the --model its help promises, and reports that model', async () => {
    const help = await runMain(['config', 'show', '--help'], {});
    expect(help.stdout).toContain('The model comes from --model');
    expect(help.stdout).toContain('-m, --model <provider:model>');
    const home = tempDir();
    const r = await runMain(['config', '--json', '--model', 'openai:gpt-test'], { DSH_HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const model = (JSON.parse(r.stdout) as { model: { ref: string; from: string } }).model;
    expect(model).toMatchObject({ ref: 'openai:gpt-test', from: '--model' });
  });
});

describe('dsh view --port that is taken', () => {
  it('names the flag and the port', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = await runMain(['view', '--port', String(port), examplePath], {});
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `dsh: --port ${port}: 127.0.0.1:${port} is in use; pick another port, or leave --port out for any free one [PORT_UNAVAILABLE]\n`,
      );
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});

describe('an unknown word after a command group with a default subcommand', () => {
  it("names the word and the group's commands, exit 2, rather than blaming the default", async () => {
    for (const [argv, want] of [
      [
        ['sessions', 'bogus'],
        "dsh: unknown command 'sessions bogus': use one of list, lineage, search, path, export, import (add --help for usage)\n",
      ],
      [['config', 'bogus'], "dsh: unknown command 'config bogus': use one of show (add --help for usage)\n"],
    ] as const) {
      const r = await runMain([...argv], {});
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(want);
    }
    // Options and the known subcommands still reach their commands.
    const list = await runMain(['sessions', '--all', '--json'], { DSH_HOME: tempDir() });
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(Array.isArray(JSON.parse(list.stdout))).toBe(true);
  });
});
