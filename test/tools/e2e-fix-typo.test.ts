/**
 * End to end: a scripted model fixes a typo in the README of a temporary git repository with
 * grep, read and edit, through `createAgent`, the built-in tools and the permissions plugin.
 * Each scripted step reads what the previous tool returned, as a model would.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import type { GenerateRequest } from '../../src/model/request.js';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { agentFor, tempDir, writeTree } from './helpers.js';

function lastToolResult(req: GenerateRequest): string {
  const msg = [...req.messages].reverse().find((m) => m.content.some((b) => b.type === 'tool-result'));
  const block = msg?.content.find((b) => b.type === 'tool-result');
  if (block?.type !== 'tool-result') throw new Error('no tool result in the request');
  return block.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=dsh test', '-c', 'user.email=test@example.invalid', ...args], { cwd, encoding: 'utf8' });

describe('end to end: fix a typo in a git repository', () => {
  it('greps, reads, edits; the file really changes; the log records every call and result', async () => {
    const repo = tempDir('dsh-e2e-');
    git(repo, 'init', '-q');
    writeTree(repo, { 'README.md': '# Widget\n\nThis projcet makes widgets.\n', 'src/index.ts': 'export const widget = 1;\n' });
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'initial');

    const adapter = new ScriptedAdapter([
      toolCallResponse([{ id: 'call_grep', name: 'grep', args: { pattern: 'projcet' } }], { text: 'Let me find the typo.' }),
      (req) => {
        const file = /^(\S+):$/m.exec(lastToolResult(req))?.[1];
        return toolCallResponse([{ id: 'call_read', name: 'read', args: { file_path: file } }]);
      },
      (req) => {
        const line = /^\d+: (.*projcet.*)$/m.exec(lastToolResult(req))?.[1];
        return toolCallResponse([
          {
            id: 'call_edit',
            name: 'edit',
            args: { file_path: 'README.md', old_string: line, new_string: line!.replace('projcet', 'project') },
          },
        ]);
      },
      textResponse('Fixed the typo in README.md.'),
    ]);
    const agent = agentFor(repo, [codingTools(), permissions({ sandbox: 'workspace-write', approval: 'ask' })], { adapter });
    agent.prompt('There is a typo in the README. Fix it.');
    await agent.whenIdle();

    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# Widget\n\nThis project makes widgets.\n');
    expect(git(repo, 'status', '--porcelain')).toBe(' M README.md\n');
    expect(git(repo, 'diff', '--numstat')).toBe('1\t1\tREADME.md\n');

    const events = agent.session.events;
    const calls = events.filter((e) => e.type === 'tool/call').map((e) => e.data as { callId: string; name: string; arguments: string });
    expect(calls.map((c) => [c.callId, c.name, JSON.parse(c.arguments)])).toEqual([
      ['call_grep', 'grep', { pattern: 'projcet' }],
      ['call_read', 'read', { file_path: 'README.md' }],
      [
        'call_edit',
        'edit',
        { file_path: 'README.md', old_string: 'This projcet makes widgets.', new_string: 'This project makes widgets.' },
      ],
    ]);
    const results = events.filter((e) => e.type === 'tool/result');
    expect(results).toHaveLength(3);
    const texts = results.map((e) => {
      const d = e.data as { message: { content: { toolCallId: string; isError: boolean; content: { text: string }[] }[] } };
      const b = d.message.content[0]!;
      return [b.toolCallId, b.isError, b.content[0]!.text];
    });
    expect(texts).toEqual([
      ['call_grep', false, 'Found 1 match in 1 file\n\nREADME.md:\n  Line 3: This projcet makes widgets.'],
      [
        'call_read',
        false,
        `<path>${repo}/README.md</path>\n<type>file</type>\n<content>\n1: # Widget\n2: \n3: This projcet makes widgets.\n\n(End ` +
          'of file - total 3 lines)\n</content>',
      ],
      ['call_edit', false, `The file ${repo}/README.md has been updated successfully.`],
    ]);
    // Each result cites its call.
    for (const r of results) {
      const callSeq = r.sourceEventSeqs?.[0];
      const c = events.find((e) => e.seq === callSeq);
      expect(c?.type).toBe('tool/call');
      expect((c!.data as { callId: string }).callId).toBe((r.data as { message: { source: { callId: string } } }).message.source.callId);
    }
    expect(results[2]!.data).toMatchObject({
      meta: {
        diffs: [
          { path: 'README.md', oldText: '# Widget\n\nThis projcet makes widgets.\n', newText: '# Widget\n\nThis project makes widgets.\n' },
        ],
      },
    });
    // Policy on record, and nothing needed asking.
    expect(events.filter((e) => e.type === 'sandbox/mode').map((e) => e.data)).toEqual([{ mode: 'workspace-write', source: 'config' }]);
    expect(events.some((e) => e.type === 'approval/asked')).toBe(false);
    const end = events.filter((e) => e.type === 'turn/end').at(-1)!;
    expect(end.data).toMatchObject({ reason: { kind: 'completed' } });
    expect(adapter.requests).toHaveLength(4);
    expect(adapter.requests[0]!.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['grep', 'read', 'edit']));
  });
});
