/**
 * `dsh completion bash|zsh|fish` and the one-meaning-per-short-flag convention. The scripts are
 * run by the real shells (bash always; zsh and fish where installed, as CI installs them), and
 * what they offer is compared with the command tree commander holds, the CLI's own source of
 * truth, plus hand-written cases.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { completionScript, type Shell } from '../../src/cli/completion.js';
import { buildProgram } from '../../src/cli/main.js';
import { Output } from '../../src/cli/output.js';
import { tempDir } from './support/agent.js';
import { runMain } from './support/inproc.js';
import { spawnPty } from './support/pty.js';

function program(): Command {
  const sink = new Output({ write: () => true }, false);
  return buildProgram({ out: sink, err: sink, env: {} }, () => {});
}

/** Every visible command with its space-joined path from `dsh`. */
function commands(c: Command, path = 'dsh'): [string, Command][] {
  const subs = c.commands.filter((s) => !(s as unknown as { _hidden?: boolean })._hidden);
  return [[path, c], ...subs.flatMap((s) => commands(s, `${path} ${s.name()}`))];
}

function has(shell: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${shell}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function script(shell: Shell): string {
  const dir = tempDir();
  const file = join(dir, `dsh.${shell}`);
  writeFileSync(file, completionScript(shell, program()));
  return file;
}

/** A workspace with known file names, for file completion. */
function workspace(): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'session-a.jsonl'), '');
  writeFileSync(join(dir, 'session-b.jsonl'), '');
  writeFileSync(join(dir, 'notes.txt'), '');
  mkdirSync(join(dir, 'sub'));
  return dir;
}

/** Runs each line (words before the cursor, then the word being completed) through one shell. */
function complete(shell: Shell, lines: readonly string[][], cwd: string): string[][] {
  const file = script(shell);
  const sep = '@@@';
  let code: string;
  if (shell === 'bash') {
    code = `source ${JSON.stringify(file)}\n${lines
      .map(
        (ws) =>
          `COMP_WORDS=(${ws.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${ws.length - 1}; _dsh_complete; ` +
          `printf '%s\\n' "\${COMPREPLY[@]}" | sort; echo ${sep}`,
      )
      .join('\n')}`;
    return run('bash', ['--norc', '--noprofile', '-c', code], cwd, sep);
  }
  if (shell === 'zsh') {
    code = `source ${JSON.stringify(file)}\n${lines
      .map((ws) => `_dsh_candidates ${ws.map((w) => `'${w}'`).join(' ')} | sort; echo ${sep}`)
      .join('\n')}`;
    return run('zsh', ['-f', '-c', code], cwd, sep);
  }
  code = `source ${JSON.stringify(file)}\n${lines
    .map((ws) => `complete -C '${ws.join(' ')}' | string replace -r '\\t.*' '' | sort; echo ${sep}`)
    .join('\n')}`;
  return run('fish', ['--no-config', '-c', code], cwd, sep);
}

function run(cmd: string, args: string[], cwd: string, sep: string): string[][] {
  // stderr is kept: zsh -f has no compinit, and the sourced script says so (tested below).
  const out = execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out
    .split(`${sep}\n`)
    .slice(0, -1)
    .map((block) => block.split('\n').filter((l) => l !== ''));
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

describe('short flags', () => {
  it('each short flag means one long option in every command, and each long option has one short form', () => {
    const byShort = new Map<string, Set<string>>();
    const byLong = new Map<string, Set<string>>();
    for (const [, c] of commands(program())) {
      for (const o of c.options) {
        if (o.short && o.long) (byShort.get(o.short) ?? byShort.set(o.short, new Set()).get(o.short)!).add(o.long);
        if (o.long) (byLong.get(o.long) ?? byLong.set(o.long, new Set()).get(o.long)!).add(o.short ?? '');
      }
    }
    const clash = (m: Map<string, Set<string>>) => [...m].filter(([, v]) => v.size > 1).map(([k, v]) => `${k}: ${[...v].join(' ')}`);
    expect(clash(byShort)).toEqual([]);
    expect(clash(byLong)).toEqual([]);
    // The two that clashed before: -c is --continue (run, chat) and nothing else.
    expect([...byShort.get('-c')!]).toEqual(['--continue']);
    expect([...byLong.get('--all')!]).toEqual(['-a']);
  });
});

describe('dsh completion', () => {
  it('prints a script for each shell and refuses another', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await runMain(['completion', shell]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`dsh completion ${shell}`);
    }
    const bad = await runMain(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are bash, zsh, fish/);
  });

  const shells: Shell[] = ['bash', 'zsh', 'fish'];
  for (const shell of shells) {
    const present = has(shell);
    if (!present && !process.env.DSH_QUIET_SKIPS) console.warn(`[dsh tests] skipping ${shell} completion: ${shell} is not installed`);
    describe.skipIf(!present)(shell, () => {
      it('completes commands, options, option values and files as written by hand', () => {
        const cwd = workspace();
        const cases: [string[], string[]][] = [
          [['dsh', 'lo'], ['log']],
          [['dsh', 'log', 'ch'], ['check']],
          [
            ['dsh', 'log', 'check', '--al'],
            ['--alerts', '--all'],
          ],
          [
            ['dsh', 'completion', ''],
            ['bash', 'fish', 'zsh'],
          ],
          [['dsh', 'completion', 'z'], ['zsh']],
          // --since takes a value: the walk skips it, then the log argument completes file names.
          [
            ['dsh', 'log', 'show', '--since', 'log', 'session-'],
            ['session-a.jsonl', 'session-b.jsonl'],
          ],
          // --config takes a file.
          [['dsh', 'config', 'show', '--config', 'no'], ['notes.txt']],
          // run's task is free text: no files, no subcommands.
          [['dsh', 'run', 'fix'], []],
          [
            ['dsh', 'nosuch', ''],
            ['acp', 'chat', 'completion', 'config', 'log', 'replay', 'run', 'sdk', 'serve', 'sessions', 'view', 'worker'],
          ],
        ];
        const got = complete(
          shell,
          cases.map(([ws]) => ws),
          cwd,
        );
        // zsh's candidates say FILES where the completion system lists files itself.
        const expected = cases.map(([ws, want]) =>
          shell === 'zsh' && want.some((w) => w.includes('.')) && !ws.includes('completion') ? ['FILES'] : want,
        );
        expect(got).toEqual(expected);
      });

      it('offers exactly the subcommands and options of every command in the tree', () => {
        const cwd = tempDir();
        const nodes = commands(program());
        const lines: string[][] = [];
        const want: string[][] = [];
        for (const [path, c] of nodes) {
          const words = path.split(' ');
          const subs = c.commands.filter((s) => !(s as unknown as { _hidden?: boolean })._hidden).map((s) => s.name());
          const flags = [...c.options.flatMap((o) => [o.short, o.long]), '-h', '--help'].filter((f): f is string => !!f);
          if (subs.length > 0) {
            lines.push([...words, '']);
            want.push(sorted(subs));
          }
          lines.push([...words, '-']);
          // fish lists short options only when asked for '-', and long ones too.
          want.push(sorted(flags));
        }
        expect(complete(shell, lines, cwd)).toEqual(want);
      });
    });
  }
});

/**
 * The zsh script as a person uses it: an interactive zsh in a real pty (temp HOME and ZDOTDIR, a
 * .zshrc that runs compinit), installed either as `_dsh` in $fpath or sourced after compinit. The
 * words are typed and Tab pressed; the test reads the list zsh draws under the prompt.
 */
describe.skipIf(!has('zsh'))('zsh completion in an interactive zsh', () => {
  const PROMPT = 'READY>';
  const tree = program();
  const run = tree.commands.find((c) => c.name() === 'run')!;
  const choicesOf = (long: string): string[] => [...(run.options.find((o) => o.long === long)?.argChoices ?? [])];
  const topLevel = tree.commands.filter((s) => !(s as unknown as { _hidden?: boolean })._hidden).map((s) => s.name());

  /** The list rows under the prompt row on the screen (the prompt row is the last holding PROMPT). */
  function listed(screen: string): string[] {
    const rows = screen.split('\n');
    let at = -1;
    rows.forEach((r, i) => {
      if (r.startsWith(PROMPT)) at = i;
    });
    return rows.slice(at + 1).filter((r) => r.trim() !== '');
  }
  /** The candidate words drawn: the first word of each described row, every word of a plain list. */
  const firstWords = (rows: string[]): string[] => sorted(rows.map((r) => r.trim().split(/\s+/)[0]!));
  const allWords = (rows: string[]): string[] => sorted(rows.flatMap((r) => r.trim().split(/\s+/)));

  async function settle(p: { screen(): string }): Promise<string> {
    // zsh draws the list in a few writes: wait until the screen stops changing.
    let last = '';
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const now = p.screen();
      if (now === last && listed(now).length > 0) return now;
      last = now;
    }
    return last;
  }

  it('sourced before compinit, the script says to run compinit first', () => {
    const r = spawnSync('zsh', ['-f', '-c', `source ${JSON.stringify(script('zsh'))}`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/compdef is not defined; run "autoload -U compinit && compinit" before sourcing/);
  });

  for (const install of ['fpath', 'source'] as const) {
    const how = install === 'fpath' ? 'a _dsh file in $fpath' : 'source after compinit';
    it(`installed by ${how}: the first Tab completes, option values complete`, async () => {
      const home = tempDir();
      const fnDir = join(home, 'functions');
      mkdirSync(fnDir);
      const file = join(fnDir, '_dsh');
      writeFileSync(file, completionScript('zsh', program()));
      const rc = [
        'bindkey -e',
        `PROMPT='${PROMPT} '`,
        'unsetopt PROMPT_SP',
        'LISTMAX=0',
        install === 'fpath' ? `fpath=(${JSON.stringify(fnDir)} $fpath)` : '',
        'autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump"',
        install === 'source' ? `source ${JSON.stringify(file)}` : '',
      ];
      writeFileSync(join(home, '.zshrc'), `${rc.join('\n')}\n`);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ZDOTDIR: home, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
      const sh = spawnPty('zsh', ['--no-globalrcs', '-i'], env, { cols: 200, rows: 60 }, home);
      try {
        await sh.waitFor(new RegExp(`^${PROMPT}`, 'm'), { timeoutMs: 10_000 });
        // The very first Tab of the shell: `dsh ` lists dsh's commands.
        sh.write('dsh \t');
        expect(firstWords(listed(await settle(sh)))).toEqual(sorted(topLevel));
        // Kill the line, clear the screen, then an option's value.
        sh.write('\x15\x0c');
        await sh.waitFor(new RegExp(`^${PROMPT} $`, 'm'));
        sh.write('dsh run --approval \t');
        expect(allWords(listed(await settle(sh)))).toEqual(sorted(choicesOf('--approval')));
        sh.write('\x15\x0c');
        await sh.waitFor(new RegExp(`^${PROMPT} $`, 'm'));
        sh.write('dsh run --sandbox \t');
        expect(allWords(listed(await settle(sh)))).toEqual(sorted(choicesOf('--sandbox')));
        // One candidate: Tab completes the word on the line.
        sh.write('\x15\x0c');
        await sh.waitFor(new RegExp(`^${PROMPT} $`, 'm'));
        sh.write('dsh run --approval ne\t');
        await sh.waitFor(new RegExp(`^${PROMPT} dsh run --approval never `, 'm'), { timeoutMs: 5_000 });
      } finally {
        sh.kill();
      }
    }, 30_000);
  }
});
