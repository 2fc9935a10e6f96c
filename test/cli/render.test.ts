/**
 * The rule `dsh run` suggests after refusing a call must allow that call, checked with the
 * permission layer's own matcher, and must not be broader than the call.
 */
import { describe, expect, it } from 'vitest';
import { ruleFor } from '../../src/cli/agent/render.js';
import { parseRule } from '../../src/tools/permissions/rules.js';

const WS = '/ws';

describe('the suggested --allow rule', () => {
  it.each([
    ['npm test', 'bash(npm test)'],
    ['git status; rm -rf build', 'bash(git status; rm -rf build)'],
    // Glob syntax in the command is escaped: the rule must not allow `ls evil.ts`.
    ['echo (a) && ls *.ts', 'bash(echo (a) && ls \\*.ts)'],
    ["printf 'it''s'", "bash(printf 'it''s')"],
  ])('bash %s: allows exactly that command', (command, expected) => {
    const rule = ruleFor('bash', JSON.stringify({ command }));
    expect(rule).toBe(expected);
    const parsed = parseRule(rule!, 'allow');
    expect(parsed.matches('bash', { kind: 'command', value: command }, WS)).toBe(true);
    expect(parsed.matches('bash', { kind: 'command', value: `${command} && curl evil.example` }, WS)).toBe(false);
    expect(parsed.matches('bash', { kind: 'command', value: command.replace('*', 'evil') }, WS)).toBe(command.indexOf('*') === -1);
  });

  it('file tools get their path; tools without a subject their name; nothing for what one line cannot name', () => {
    const edit = ruleFor('edit', JSON.stringify({ file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }));
    expect(edit).toBe('edit(src/a.ts)');
    expect(parseRule(edit!, 'allow').matches('edit', { kind: 'path', value: 'src/a.ts' }, WS)).toBe(true);
    expect(parseRule(edit!, 'allow').matches('edit', { kind: 'path', value: 'src/b.ts' }, WS)).toBe(false);
    expect(ruleFor('everything__echo', '{"message":"hi"}')).toBe('everything__echo');
    expect(ruleFor('bash', JSON.stringify({ command: 'cat <<EOF\nx\nEOF' }))).toBeUndefined();
    expect(ruleFor('bash', 'not json')).toBeUndefined();
  });
});
