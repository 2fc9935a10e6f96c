/**
 * Other agents' logs through the command line: every `dsh log` command, `view` and `export` take
 * them directly (detected by content), `FILE#key` names one session of a file holding several,
 * and `dsh log import` writes them as dsh logs with the losses reported per field.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runView } from '../../src/cli/view.js';
import { Output } from '../../src/cli/output.js';
import { runMain } from './support/inproc.js';
import { builtBin, dsh } from './support/run.js';
import { spawnSync } from 'node:child_process';
import { examplePath, scratch } from './support/files.js';
import { tempDir } from './support/agent.js';
import { startReceiver } from '../observability/support/receiver.js';
import { describeShared, repoRoot, sharedPath } from '../support/shared.js';

const real = (p: string): string => sharedPath('fixtures', 'real', p);
const CC = real('claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
const PI = real('pi-mono/large-session.jsonl');
const TRAJ = real('swe-agent/function_calling_simple.traj');
const write = scratch();

describeShared('dsh log commands on other agents’ logs', () => {
  it('check: loads, says what it was read as and lists each loss with its source line', async () => {
    const r = await runMain(['log', 'check', '--json', CC]);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as {
      files: { verdict: string; summary: { turns: number }; problems: { code: string; line?: number; message: string }[] }[];
    };
    const f = rep.files[0]!;
    expect(f.verdict).toBe('ok-with-warnings');
    expect(f.problems[0]).toMatchObject({ code: 'IMPORTED', message: expect.stringMatching(/Claude Code transcript.*5 more session/) });
    const loss = f.problems.find((p) => p.code === 'IMPORT_LOSS' && /toolUseResult/.test(p.message))!;
    // The line named holds a toolUseResult in the source.
    expect(JSON.parse(readFileSync(CC, 'utf8').split('\n')[loss.line! - 1]!)).toHaveProperty('toolUseResult');
    // --strict: a lossy import fails.
    expect((await runMain(['log', 'check', '--strict', CC])).code).toBe(1);
  });

  it('show, messages and FILE#key: a sidechain is its own session', async () => {
    const show = await runMain(['log', 'show', `${CC}#sidechain-2`]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^session fe5e1c67-53e7-4862-81ae-d0e013e3270b\.sidechain-2 /);
    expect(show.stdout).toMatch(/origin subagent/);
    const msgs = await runMain(['log', 'messages', '--json', TRAJ]);
    const list = JSON.parse(msgs.stdout) as { role: string }[];
    const src = JSON.parse(readFileSync(TRAJ, 'utf8')) as { history: { role: string }[] };
    // The history minus the system prompt (a request header in dsh) is the derived history.
    expect(list).toHaveLength(src.history.filter((m) => m.role !== 'system').length);
    const none = await runMain(['log', 'show', `${CC}#nope`]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/has no session "nope"; it holds: main, sidechain-1.*\[NO_SUCH_SESSION\]/);
  });

  it('import -o writes every session of the file as a dsh log that loads, and reports losses per field', async () => {
    const dir = tempDir('dsh-import-');
    const out = join(dir, 'cc.jsonl');
    const r = await runMain(['log', 'import', CC, '-o', out, '--json']);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as {
      format: { id: string };
      sessions: { key: string; out: string; events: number; losses: { field: string; count: number }[] }[];
    };
    expect(rep.format.id).toBe('claude-code');
    expect(rep.sessions.map((s) => s.key)).toEqual(['main', 'sidechain-1', 'sidechain-2', 'sidechain-3', 'sidechain-4', 'sidechain-5']);
    expect(readdirSync(dir).sort()).toEqual(['cc.jsonl', ...[1, 2, 3, 4, 5].map((n) => `cc.sidechain-${n}.jsonl`)].sort());
    const rows = readFileSync(CC, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { isSidechain?: boolean; toolUseResult?: unknown });
    const mainLoss = rep.sessions[0]!.losses.find((l) => l.field === 'toolUseResult')!;
    expect(mainLoss.count).toBe(rows.filter((o) => o.isSidechain === false && o.toolUseResult !== undefined).length);
    const check = await runMain(['log', 'check', ...readdirSync(dir).map((f) => join(dir, f))]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/6 files: 6 ok, 0 failed/);
    // Without -o the first session goes to standard output; the written log is a dsh log.
    const piOut = await runMain(['log', 'import', PI]);
    expect(piOut.stdout.split('\n')[0]).toMatch(/^\{"type":"session","version":0,"id":"d703a1a9/);
    expect(piOut.stderr).toMatch(/pi session, 1 session\n {2}main \(d703a1a9[^\n]*\n(?: {4}lost [^\n]*\n)* {4}lost 453 × assistant\.api/);
  });

  it('import refuses a dsh log, an output over its input, and names unknown formats', async () => {
    const example = join(repoRoot, 'examples', 'fix-typo.jsonl');
    const dshLog = await runMain(['log', 'import', example]);
    expect(dshLog.code).toBe(2);
    expect(dshLog.stderr).toMatch(/already a dsh session log/);
    const copy = write('t.traj', readFileSync(TRAJ));
    expect((await runMain(['log', 'import', copy, '-o', copy])).code).toBe(2);
    const junk = write('junk.jsonl', '{"hello":"world"}\n');
    const r = await runMain(['log', 'show', junk]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        'not a session log this build reads.*Known formats: dsh session log \\(JSONL\\), pi session, Codex rollout, ' +
          'Claude Code transcript, OpenHands trajectory or event stream, SWE-agent trajectory \\(\\.traj\\) \\[UNKNOWN_FORMAT\\]',
      ),
    );
  });

  it('a foreign log on standard input is read like a file (real process)', async () => {
    const r = await dsh(['log', 'show', '-'], { input: readFileSync(TRAJ) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^session swe-agent-trajectory /);
    expect(r.stdout).toMatch(/tool call find_file \[call_PbWErNIge3YTrli3fiVvmIid\]/);
  });

  it('a pipe by path (process substitution), sent slowly in parts, is read like a file (real process)', () => {
    const r = spawnSync('bash', ['-c', '$DSH log check <(head -c 100 "$F"; sleep 0.3; tail -c +101 "$F")'], {
      env: { ...process.env, DSH: `${process.execPath} ${builtBin()}`, F: PI, NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/warning IMPORTED: read as: pi session/);
    expect(r.stdout).toMatch(/^\/dev\/fd\/\d+: ok · /m);
  });

  it('export sends the imported session as traces', async () => {
    const receiver = await startReceiver();
    try {
      const r = await runMain(['log', 'export', '--otlp', receiver.url, '--json', PI]);
      expect(r.code).toBe(0);
      const s = JSON.parse(r.stdout) as { turns: number; spans: number };
      const prompts = readFileSync(PI, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"role":"user"')).length;
      expect(s.turns).toBe(prompts);
      expect(s.spans).toBeGreaterThan(s.turns);
    } finally {
      await receiver.close();
    }
  });

  it('view opens an imported session, at a seq with --seq', async () => {
    let stdout = '';
    const io = { out: new Output({ write: (s: string) => (stdout += s) }, false), err: new Output({ write: () => true }, false), env: {} };
    let stop!: () => void;
    const done = runView(`${CC}#sidechain-1`, { seq: 5 }, io, new Promise<void>((r) => (stop = r)));
    for (let i = 0; i < 300 && !stdout.includes('http'); i++) await new Promise((r) => setTimeout(r, 10));
    const url = stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/#seq=5$/);
    const session = (await (await fetch(new URL('api/session', url))).json()) as { header: { id: string } };
    expect(session.header.id).toBe('fe5e1c67-53e7-4862-81ae-d0e013e3270b.sidechain-1');
    stop();
    expect(await done).toBe(0);
    await expect(runView(CC, { seq: 10_000 }, io, Promise.resolve())).rejects.toMatchObject({ code: 'SEQ_OUT_OF_RANGE' });
    // A dsh log too (followed, not imported): refused before any address is printed.
    stdout = '';
    await expect(runView(examplePath, { seq: 10_000 }, io, Promise.resolve())).rejects.toMatchObject({
      code: 'SEQ_OUT_OF_RANGE',
      message: expect.stringContaining('--seq 10000: the log has seqs 0 to'),
    });
    expect(stdout).toBe('');
  });
});
