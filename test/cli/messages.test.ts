/**
 * `dsh log messages`: the derived history at any seq equals an independent derivation in the
 * test (surface ops folded, per-event projection rules from the seeds).
 */
import { describe, expect, it } from 'vitest';
import { examplePath, exampleLines, exampleText, lineOf, scratch } from './support/files.js';
import { deriveAt, parseRaw } from './support/raw-log.js';
import { dshIn as dsh, dshAllIn as dshAll } from './support/inproc.js';

const file = scratch();
const { events } = parseRaw(exampleText());
const last = events.length - 1;

describe('dsh log messages --json', () => {
  it('is the derived history at seqs across the example (before, on and between surface events)', async () => {
    const firstOf = (type: string, skip = 0): number => events.filter((e) => e.type === type)[skip]!.seq;
    const seqs = [
      0,
      firstOf('user/message'),
      firstOf('user/message', 1),
      firstOf('assistant/chunk'),
      firstOf('assistant/message'),
      firstOf('tool/result'),
      firstOf('tool/result') - 1,
      firstOf('turn/end'),
      firstOf('tool/result', 3),
      last,
    ];
    const runs = await dshAll(seqs.map((s) => ['log', 'messages', '--json', '--at', String(s), examplePath]));
    runs.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout), `--at ${seqs[i]}`).toEqual(deriveAt(events, seqs[i]!));
    });
  });

  it('defaults to the end of the log', async () => {
    const r = await dsh(['log', 'messages', '--json', examplePath]);
    expect(JSON.parse(r.stdout)).toEqual(deriveAt(events, last));
  });

  it('leaves out an assistant message with empty content (it still carries usage in the log)', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"assistant\/message"/);
    const msg = JSON.parse(lines[n - 1]!) as { seq: number; data: { message: { content: unknown[] } } };
    msg.data.message.content = [];
    lines[n - 1] = JSON.stringify(msg);
    // Its tool call now answers no block; drop nothing else: the call and result still pair.
    const p = file('empty-content.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'messages', '--json', '--at', String(msg.seq), p]);
    expect(r.code).toBe(0);
    const roles = (JSON.parse(r.stdout) as { role: string }[]).map((m) => m.role);
    expect(roles).toEqual(['user', 'user']);
  });
});

describe('dsh log messages (text)', () => {
  it('prints role, source, seq and every content block in full', async () => {
    const r = await dsh(['log', 'messages', examplePath]);
    expect(r.code).toBe(0);
    const expected = deriveAt(events, last) as { role: string; content: { type: string; text?: string; arguments?: string }[] }[];
    expect(r.stdout.split('\n')[0]).toBe(`history as of seq ${last} (turn/end, turn 2, end of log): ${expected.length} messages`);
    expect(r.stdout.match(/^\[\d+\] /gm)).toHaveLength(expected.length);
    expect(r.stdout).toContain('[0] user · user · msg-0001 · seq 4\n    text:\n      Fix the typo in README.md\n');
    expect(r.stdout).toMatch(
      new RegExp(
        '\\[1\\] user · plugin runtime-context · snapshot · msg-0002 · seq 5\\n {4}text:\\n' +
          ' {6}Current runtime context\\.\\n\\n {6}Working directory: /tmp/demo-repo\\n',
      ),
    );
    expect(r.stdout).toContain(
      '    tool-call edit [call_03_edit] arguments:\n      {"file_path":"README.md","old_string":"to recieve only",' +
        '"new_string":"to receive only"}\n',
    );
    expect(r.stdout).toContain(
      '    tool-result [call_04_read] isError: true\n      text:\n        Error: cannot read "/tmp/demo-repo/docs/usage.md": not found\n',
    );
    const answer = expected.at(-1)!.content[0]!.text!;
    expect(r.stdout).toContain(`      ${answer}\n`);
  });

  it('--at gives the history at that seq', async () => {
    const at = events.find((e) => e.type === 'tool/result')!.seq;
    const r = await dsh(['log', 'messages', '--brief', '--at', String(at), examplePath]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`history as of seq ${at} (tool/result, turn 1 step 1): ${deriveAt(events, at).length} messages`);
    expect(r.stdout).toContain('    tool-result [call_01_grep] ok "README.md:5:Pass --quiet to recieve only errors."');
  });

  it('shows an image block as a reference line, never its bytes', async () => {
    const lines = exampleLines();
    const n = lineOf(lines, /"type":"user\/message"/);
    const msg = JSON.parse(lines[n - 1]!) as { data: { content: unknown[] } };
    msg.data.content.push({
      type: 'image',
      attachment: { attachmentId: 'sha256:abc123', mediaType: 'image/png', bytes: 20480, width: 640, height: 480, name: 'shot.png' },
    });
    lines[n - 1] = JSON.stringify(msg);
    const p = file('image.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'messages', '--at', '10', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('    [image image/png · 20 480 bytes · 640×480 · shot.png · sha256:abc123]\n');
  });

  it('--at outside the log is a clear usage error', async () => {
    const r = await dsh(['log', 'messages', '--at', String(last + 1), examplePath]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(`dsh: ${examplePath}: --at ${last + 1} is outside the log: its seqs are 0…${last} [SEQ_OUT_OF_RANGE]`);
  });

  it('--at that is not a seq is a usage error', async () => {
    for (const bad of ['-1', 'abc', '1.5']) {
      const r = await dsh(['log', 'messages', '--at', bad, examplePath]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toMatch(
        /^dsh: error: option '--at <seq>' argument '.*' is invalid\. expected a seq \(an integer ≥ 0\) \(add --help for usage\)\n$/,
      );
    }
  });
});
