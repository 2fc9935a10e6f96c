/**
 * `dsh replay`: the bundled example and real dsh logs re-run through the agent loop with no model,
 * compared with their recordings; exit 0 when what must match matches, 1 otherwise.
 */
import { linkSync, lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeShared, repoRoot, sharedPath } from '../support/shared.js';
import { runMain } from './support/inproc.js';
import { examplePath, exampleLines, scratch } from './support/files.js';
import { FIXED_README, logEvents, tempDir, TYPO_README, turnEnds } from './support/agent.js';

const file = scratch();

describe('dsh replay', () => {
  it('re-runs the example with no model and no key: the transcript, then MATCH and exit 0', async () => {
    const r = await runMain(['replay', examplePath], {});
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = r.stdout.split('\n');
    expect(out.slice(0, 4)).toEqual([
      '› Fix the typo in README.md',
      'Fixed the typo in README.md: line 5 said "recieve", it now says "receive".',
      '› Also fix it in docs/usage.md',
      'There is no docs/usage.md in this repository, so there is nothing more to fix; README.md was the only file with the typo.',
    ]);
    expect(out).toContain('MATCH (recorded 2 turn(s), 6 step(s), 6 attempt(s), 152 chunk(s), 4 tool call(s))');
    for (const cat of ['structure', 'inputs', 'chunks', 'assistant', 'toolCalls', 'endReasons', 'retries', 'todos'])
      expect(out).toContain(`  ${cat}: ok`);
    expect(out).toContain('  tool results: same');
    expect(out.at(-2)).toBe('replay: ok');
    expect(r.stderr.split('\n')).toEqual([
      '→ grep {"pattern":"recieve|teh|occured|seperate","path":"README.md"}',
      '← grep ok',
      '→ read {"file_path":"README.md"}',
      '← read ok',
      expect.stringMatching(/^→ edit \{"file_path":"README.md","old_string":"to recieve only"/),
      '← edit ok',
      '→ read {"file_path":"docs/usage.md"}',
      '← read error FS_NOT_FOUND: cannot read "/tmp/demo-repo/docs/usage.md": not found',
      '',
    ]);
  });

  it("is what the README's quick start shows", async () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npx dsh replay examples/fix-typo.jsonl\n');
    const start = readme.indexOf('```\n› Fix the typo in README.md');
    expect(start).toBeGreaterThan(0);
    const shown = readme
      .slice(start + 4, readme.indexOf('```', start + 4))
      .trimEnd()
      .split('\n')
      .filter((l) => l.trim() !== '…');
    const r = await runMain(['replay', examplePath], {});
    const printed = new Set([...r.stdout.split('\n'), ...r.stderr.split('\n')]);
    expect(shown.filter((l) => !printed.has(l))).toEqual([]);
    expect(shown.length).toBeGreaterThan(15);
  });

  it('--json prints one report; --out writes the replayed log, which loads and ends its turns as recorded', async () => {
    const out = join(tempDir(), 'replayed.jsonl');
    const r = await runMain(['replay', '--json', '--out', out, examplePath], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      matches: boolean;
      out: string;
      comparison: { checked: Record<string, number>; differences: unknown[] };
      divergences: unknown[];
    };
    expect(report).toMatchObject({ ok: true, matches: true, out, divergences: [] });
    expect(report.comparison.differences).toEqual([]);
    // Calls are compared per step and end reasons per turn: the example has 6 steps in 2 turns
    // (a vacuous comparison would count 0).
    expect(report.comparison.checked.toolCalls).toBe(6);
    expect(report.comparison.checked.endReasons).toBe(2);
    const check = await runMain(['log', 'check', out]);
    expect(check.code, check.stdout).toBe(0);
    expect(turnEnds(logEvents(out)).map((e) => e.data.reason)).toEqual(turnEnds(logEvents(examplePath)).map((e) => e.data.reason));
  });

  it('a recording the loop does not reproduce fails with exit 1 and names the difference', async () => {
    // Claim that turn 2 hit the token limit; the recorded stream says it stopped normally.
    const lines = exampleLines();
    const last = JSON.parse(lines.at(-1)!) as { type: string; data: { reason: { kind: string } } };
    expect(last.type).toBe('turn/end');
    last.data.reason = { kind: 'max-tokens' };
    const altered = file('altered.jsonl', [...lines.slice(0, -1), JSON.stringify(last), ''].join('\n'));
    const r = await runMain(['replay', altered], {});
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^DIFFERS: 1 must-match difference\(s\)/m);
    expect(r.stdout).toMatch(/^ {2}endReasons: 1 difference\(s\)$/m);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('replay: FAILED');
  });

  it('--live-tools runs the real tools in the named workspace: the typo is really fixed', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'README.md'), TYPO_README);
    const r = await runMain(['replay', '--live-tools', '--cwd', ws, examplePath], {});
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(ws, 'README.md'), 'utf8')).toBe(FIXED_README);
    // Real tools word their results differently from the recording: reported, allowed.
    expect(r.stdout).toMatch(/^ {2}tool results: 4 differ \(allowed\)$/m);
    expect(r.stderr).toContain(`← read error FS_NOT_FOUND: cannot read "${join(ws, 'docs/usage.md')}": not found`);
  });

  it('--live-tools needs --cwd, and --out may not overwrite the recording', async () => {
    const a = await runMain(['replay', '--live-tools', examplePath], {});
    expect(a.code).toBe(2);
    expect(a.stderr).toBe(
      'dsh: --live-tools runs the recorded tool calls for real (writes and shell commands included); name the workspace they run ' +
        'in with --cwd DIR [USAGE]\n',
    );
    const b = await runMain(['replay', '--out', examplePath, examplePath], {});
    expect(b.code).toBe(2);
    expect(b.stderr).toBe('dsh: --out names the recording itself; write the replayed log somewhere else [USAGE]\n');
    const c = await runMain(['replay', join(tempDir(), 'missing.jsonl')], {});
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/: no such file \[FILE_NOT_FOUND\]\n$/);
  });

  it('--out through a symbolic or hard link to the recording is the recording too: refused, the recording untouched', async () => {
    const dir = tempDir();
    const rec = join(dir, 'rec.jsonl');
    const original = readFileSync(examplePath);
    writeFileSync(rec, original);
    symlinkSync(rec, join(dir, 'soft.jsonl'));
    linkSync(rec, join(dir, 'hard.jsonl'));
    for (const [out, input] of [
      [join(dir, 'soft.jsonl'), rec],
      [join(dir, 'hard.jsonl'), rec],
      [rec, join(dir, 'soft.jsonl')],
    ] as const) {
      const r = await runMain(['replay', '--out', out, input], {});
      expect(r.code, `${out} ${input}`).toBe(2);
      expect(r.stderr).toBe('dsh: --out names the recording itself; write the replayed log somewhere else [USAGE]\n');
      expect(readFileSync(rec).equals(original)).toBe(true);
    }
  });

  it('--out replaces an existing file whole (written beside it, then renamed), and writes through a link to another file', async () => {
    const dir = tempDir();
    const target = join(dir, 'target.jsonl');
    writeFileSync(target, 'old contents\n');
    symlinkSync(target, join(dir, 'link.jsonl'));
    const r = await runMain(['replay', '--out', join(dir, 'link.jsonl'), examplePath], {});
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink()).toBe(true);
    const check = await runMain(['log', 'check', target]);
    expect(check.code, check.stdout).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['link.jsonl', 'target.jsonl']); // no temporary file left
  });
});

describeShared('dsh replay on real dsh logs', () => {
  const real = (name: string): string => sharedPath('fixtures', 'dsh', name);

  it.each(['acp-agent__fs-read.jsonl', 'acp-agent__todo-write.jsonl', 'acp-agent__cancel.jsonl', 'acp-agent__empty-response-retry.jsonl'])(
    '%s matches its recording',
    async (name) => {
      const r = await runMain(['replay', '--strict', real(name)], {});
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(/^MATCH \(recorded \d+ turn\(s\)/m);
      expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('replay: ok');
    },
  );

  it('a log the harness cannot reproduce (a plugin rewrote history mid-step) fails with exit 1', async () => {
    const r = await runMain(['replay', real('acp-agent__agent-instructions.jsonl')], {});
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^DIFFERS: /m);
  });

  it('a log where dsh compacted history to recover from an overflow replays and matches', async () => {
    const r = await runMain(['replay', real('headless-agent__compaction-recovery.jsonl')], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^MATCH /m);
  });
});

describe('dsh replay of a log it cannot replay to the end', () => {
  it('a turn closed by crash repair: the replay runs and compares the turns before it, says where it stopped, and passes', async () => {
    const lines = exampleLines();
    // The writer died inside turn 2: its last lines never reached the file.
    const turn2 = lines.findIndex((l) => l.includes('"type":"turn/start"') && l.includes('"turn":2'));
    const cut = file('crashed.jsonl', `${lines.slice(0, turn2 + 12).join('\n')}\n`);
    const r = await runMain(['replay', cut], {});
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toContain('the last turn was left open; crash repair added');
    expect(r.stdout).toMatch(
      new RegExp(
        '^ {2}cannot replay faithfully: turn 2 was closed by crash repair \\(the process writing it died mid-turn\\), ' +
          'which no replay can reproduce$',
        'm',
      ),
    );
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('replay: ok before turn 2 (turn 2 onwards cannot be replayed; see above)');
    const json = JSON.parse((await runMain(['replay', '--json', cut], {})).stdout) as {
      ok: boolean;
      stoppedBefore: { turn: number; seq: number };
    };
    expect(json.ok).toBe(true);
    expect(json.stoppedBefore).toEqual({ turn: 2, seq: JSON.parse(lines[turn2]!).seq });
    // What was replayed really was compared: a changed turn 1 still fails.
    const altered = lines.slice(0, turn2 + 12).map((l) => l.replace('"kind":"completed"', '"kind":"max-tokens"'));
    const bad = await runMain(['replay', file('crashed-altered.jsonl', `${altered.join('\n')}\n`)], {});
    expect(bad.code).toBe(1);
  });
});
