/**
 * `main` builds only the command its command line names (src/cli/main.ts, `buildProgram`): that
 * command must parse, help and fail exactly as in the whole program, and every other first word
 * (none, an option, `help`, a typo, `completion`) must get the whole program.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { Output } from '../../src/cli/output.js';
import { runMain } from './support/inproc.js';

function program(command?: string): Command {
  const sink = new Output({ write: () => true }, false);
  return buildProgram({ out: sink, err: sink, env: {} }, () => {}, command);
}

/** Every command below `c` (hidden ones too), by its space-joined path. */
function tree(c: Command, path: string): [string, Command][] {
  return [[path, c], ...c.commands.flatMap((s) => tree(s, `${path} ${s.name()}`))];
}

/** What a command is to its user: its help, and each option's flags, default and choices. */
function shape(c: Command): unknown {
  return {
    help: c.helpInformation(),
    options: c.options.map((o) => [o.flags, o.defaultValue, o.argChoices, o.hidden, o.mandatory]),
    args: c.registeredArguments.map((a) => [a.name(), a.required, a.variadic, a.defaultValue, a.argChoices]),
  };
}

const whole = program();
const names = whole.commands.map((c) => c.name());

describe('the program built for one command', () => {
  it('covers every top-level command of the whole program', () => {
    // The list is read from the whole program, so a command added to it is covered here too.
    expect(names).toEqual(expect.arrayContaining(['run', 'chat', 'sessions', 'log', 'config', 'completion']));
    expect(names.length).toBeGreaterThanOrEqual(12);
  });

  it.each(names.filter((n) => n !== 'completion'))('%s: holds that command alone, with the same subtree as the whole program', (name) => {
    const one = program(name);
    expect(one.commands.map((c) => c.name())).toEqual([name]);
    const mine = tree(one.commands[0]!, `dsh ${name}`);
    const theirs = tree(whole.commands.find((c) => c.name() === name)!, `dsh ${name}`);
    expect(mine.map(([p]) => p)).toEqual(theirs.map(([p]) => p));
    for (const [i, [path, c]] of mine.entries()) expect(shape(c), path).toEqual(shape(theirs[i]![1]));
    // The program's own options (--version, --help) are the same too.
    expect(one.options.map((o) => o.flags)).toEqual(whole.options.map((o) => o.flags));
  });

  it('is the whole program for completion (its script walks every command), no word, an option, help or a typo', () => {
    for (const word of ['completion', undefined, '--version', '-h', 'help', 'sesions', 'Log'])
      expect(
        program(word).commands.map((c) => c.name()),
        String(word),
      ).toEqual(names);
  });

  it('still suggests the command a typo meant, and lists every command in help', async () => {
    const typo = await runMain(['sesions']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'sesions'");
    expect(typo.stderr).toContain('sessions');
    const help = await runMain(['help']);
    expect(help.code).toBe(0);
    for (const n of names) expect(help.stdout).toContain(`  ${n}`);
  });

  it("fails a command's bad options and unknown subcommands as the whole program does", async () => {
    const bad = await runMain(['log', 'check', '--no-such-flag', 'x.jsonl']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--no-such-flag'");
    const sub = await runMain(['sessions', 'bogus']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("unknown command 'sessions bogus': use one of list, lineage, search, path, export, import");
  });
});
