/**
 * "Allow for this session" (the chat's choice 2, ACP's "Always allow") records the rule `ruleFor`
 * builds for the call. That rule must match exactly that call: a command or path holding glob
 * syntax (`*`, `?`, `[…]`, `{a,b}`, `\`) used to give a rule that did not match the call it was
 * offered for, or that matched other calls too (`bash(ls [a-z].txt)` allowed `ls a.txt`).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRule, ruleFor, type Subject } from '../../src/tools/permissions/rules.js';
import { codingTools } from '../../src/tools/coding-tools.js';
import { agentFor } from './helpers.js';

const ws = mkdtempSync(join(tmpdir(), 'dsh-rulefor-'));
const allows = (rule: string, tool: string, subject: Subject): boolean => parseRule(rule, 'allow').matches(tool, subject, ws);
const bashRule = (command: string): string | undefined => ruleFor('bash', JSON.stringify({ command }), ws);
const writeRule = (file_path: string): string | undefined => ruleFor('write', JSON.stringify({ file_path, content: 'x' }), ws);
const cmd = (value: string): Subject => ({ kind: 'command', value });
const path = (value: string): Subject => ({ kind: 'path', value });

/** Text heavy in the glob dialect's characters and the shell's, so the cases that matter come up often. */
const META = ['*', '?', '[', ']', '{', '}', ',', '!', '^', '\\', '/', '.', ' ', "'", '"', '$', '(', ')', ';', '&', '|', '<', '>', '-'];
const textArb = fc
  .array(
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...META) }, { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 3 }) }),
    {
      minLength: 1,
      maxLength: 16,
    },
  )
  .map((parts) => parts.join(''));
const commandArb = textArb.filter((s) => s.trim() !== '' && !/[\n\r]/.test(s));
/** Workspace-relative file names: no `.`/`..` segments, no empty segments (those name another path). */
const pathArb = fc
  .array(
    textArb.map((s) => s.replace(/[/\n\r\0]/g, '_')).filter((s) => s !== '.' && s !== '..' && s.trim() === s && s !== ''),
    { minLength: 1, maxLength: 3 },
  )
  .map((segs) => segs.join('/'));

describe('ruleFor: the rule offered for a call matches that call and no other', () => {
  it('the reviewer cases: escaped, so each matches itself and nothing wider', () => {
    expect(bashRule("printf 'x\\n' > out.txt")).toBe("bash(printf 'x\\\\n' > out.txt)");
    expect(allows(bashRule("printf 'x\\n' > out.txt")!, 'bash', cmd("printf 'x\\n' > out.txt"))).toBe(true);
    expect(allows(bashRule('echo a\\ b')!, 'bash', cmd('echo a\\ b'))).toBe(true);
    expect(allows(bashRule('echo {1,2}')!, 'bash', cmd('echo {1,2}'))).toBe(true);
    expect(allows(bashRule('echo {1,2}')!, 'bash', cmd('echo 1'))).toBe(false);
    expect(allows(bashRule('ls [a-z].txt')!, 'bash', cmd('ls [a-z].txt'))).toBe(true);
    expect(allows(bashRule('ls [a-z].txt')!, 'bash', cmd('ls a.txt'))).toBe(false);
    expect(allows(bashRule('rm *.log')!, 'bash', cmd('rm *.log'))).toBe(true);
    expect(allows(bashRule('rm *.log')!, 'bash', cmd('rm -rf / x.log'))).toBe(false);
    expect(allows(writeRule('data[1].json')!, 'write', path('data[1].json'))).toBe(true);
    expect(allows(writeRule('data[1].json')!, 'write', path('data1.json'))).toBe(false);
    expect(allows(writeRule('a{b,c}.txt')!, 'write', path('ab.txt'))).toBe(false);
    expect(allows(writeRule('src/**')!, 'write', path('src/a/b.ts'))).toBe(false);
  });

  it('a path is named as the rules see it (workspace-relative), and one with edge spaces gets no rule', () => {
    expect(writeRule('./a/../b.txt')).toBe('write(b.txt)');
    expect(allows(writeRule('./a/../b.txt')!, 'write', path('./a/../b.txt'))).toBe(true);
    expect(writeRule('notes.txt ')).toBeUndefined();
    expect(bashRule('echo one\necho two')).toBeUndefined();
  });

  it('property: for any command, the rule allows it, and does not allow a different command', () => {
    fc.assert(
      fc.property(commandArb, commandArb, (a, b) => {
        const rule = bashRule(a);
        expect(rule).toBeDefined();
        expect(allows(rule!, 'bash', cmd(a))).toBe(true);
        // A different call: another command, or this one with something added at either end.
        for (const other of [b, `${a}x`, `x${a}`, `${a} ;rm -rf ~`, `${a}*`])
          if (other.trim() !== a.trim()) expect(allows(rule!, 'bash', cmd(other))).toBe(false);
        expect(allows(rule!, 'write', path(a))).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('property: for any workspace path, the rule allows it, and does not allow a different path', () => {
    fc.assert(
      fc.property(pathArb, pathArb, (a, b) => {
        const rule = writeRule(a);
        expect(rule).toBeDefined();
        expect(allows(rule!, 'write', path(a))).toBe(true);
        for (const other of [b, `${a}x`, `x${a}`, `${a}/x`, `x/${a}`])
          if (other !== a) expect(allows(rule!, 'write', path(other))).toBe(false);
      }),
      { numRuns: 400 },
    );
  });
});

describe('every built-in tool with a permission subject gets a rule naming that subject, never the whole tool', () => {
  // Sample arguments per tool: a new tool with a subject must be added here, or the test fails.
  const samples: Record<string, Record<string, unknown>> = {
    bash: { command: 'ls' },
    read: { file_path: 'a.txt' },
    write: { file_path: 'a.txt', content: 'x' },
    edit: { file_path: 'a.txt', old_string: 'a', new_string: 'b' },
    glob: { pattern: '*.ts', path: 'src' },
    grep: { pattern: 'x', path: 'src' },
    str_replace_editor: { command: 'create', path: join(ws, 'x.env'), file_text: 'k' },
  };
  for (const toolSet of ['standard', 'minimal'] as const) {
    it(`tool set ${toolSet}`, () => {
      const agent = agentFor(ws, [codingTools({ ripgrep: 'off', toolSet })]);
      let checked = 0;
      for (const name of agent.tools.names()) {
        const def = agent.tools.get(name)!;
        if (!def.permission?.subject) continue;
        const args = samples[name];
        expect(args, `sample arguments for ${name}`).toBeDefined();
        const subject = def.permission.subject(args);
        const rule = ruleFor(name, JSON.stringify(args), ws);
        expect(rule, name).toMatch(new RegExp(`^${name}\\(.+\\)$`));
        // The rule allows this call, and not the same tool on another subject.
        expect(allows(rule!, name, subject!)).toBe(true);
        const other: Subject = subject!.kind === 'command' ? cmd('rm -rf /') : path(join(ws, 'secrets', 'key'));
        expect(allows(rule!, name, other)).toBe(false);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
    });
  }
});

describe('a bash call with its own workdir gets no session rule', () => {
  it('the rule would name only the command and allow it in any directory', () => {
    expect(ruleFor('bash', JSON.stringify({ command: 'rm -rf build', workdir: 'other' }), ws)).toBeUndefined();
    expect(ruleFor('bash', JSON.stringify({ command: 'rm -rf build', workdir: '.' }), ws)).toBe('bash(rm -rf build)');
    expect(ruleFor('bash', JSON.stringify({ command: 'rm -rf build' }), ws)).toBe('bash(rm -rf build)');
  });
});
