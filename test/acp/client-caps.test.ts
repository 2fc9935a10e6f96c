/**
 * A client that offers its file system and terminal (`initialize`'s clientCapabilities): the file
 * tools read through `fs/read_text_file` (the editor's unsaved buffers) and write on the disk, policy
 * still refuses a path outside the workspace before anything reaches the client, and `bash` runs in a client terminal
 * only where the sandbox policy leaves the command unconfined. The client here is the SDK's client
 * side with real handlers: buffers in memory over the disk, terminals that are real processes.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';
import {
  agentsClosedAfterEach,
  harness,
  results,
  run,
  textCall,
  toolCall,
  type ClientApp,
  type Harness,
  type LoggedResult,
} from './support.js';

const start = agentsClosedAfterEach();

interface Recorded {
  method: string;
  params: Record<string, unknown>;
}

/** An editor: buffers (unsaved text by path) over the disk, and terminals that run real processes. */
function editor(buffers: Map<string, string>, seen: Recorded[], env: Record<string, string> = {}) {
  const terminals = new Map<string, { output: string; exit: Promise<{ exitCode: number | null; signal: string | null }>; kill(): void }>();
  let n = 0;
  return (app: ClientApp): ClientApp =>
    app
      .onRequest('fs/read_text_file', ({ params }) => {
        seen.push({ method: 'fs/read_text_file', params: { ...params } });
        return { content: buffers.get(params.path) ?? readFileSync(params.path, 'utf8') };
      })
      .onRequest('fs/write_text_file', ({ params }) => {
        seen.push({ method: 'fs/write_text_file', params: { ...params } });
        buffers.set(params.path, params.content); // the editor's buffer; it saves when it likes
        return {};
      })
      .onRequest('terminal/create', ({ params }) => {
        seen.push({ method: 'terminal/create', params: { ...params } });
        const id = `term-${++n}`;
        const child = spawn(params.command, params.args ?? [], {
          cwd: params.cwd ?? undefined,
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const t = {
          output: '',
          exit: new Promise<{ exitCode: number | null; signal: string | null }>((r) =>
            child.on('close', (exitCode, signal) => r({ exitCode, signal })),
          ),
          kill: () => child.kill('SIGKILL'),
        };
        child.stdout.on('data', (d: Buffer) => (t.output += d.toString()));
        child.stderr.on('data', (d: Buffer) => (t.output += d.toString()));
        terminals.set(id, t);
        return { terminalId: id };
      })
      .onRequest('terminal/wait_for_exit', async ({ params }) => {
        seen.push({ method: 'terminal/wait_for_exit', params: { ...params } });
        return terminals.get(params.terminalId)!.exit;
      })
      .onRequest('terminal/output', async ({ params }) => {
        seen.push({ method: 'terminal/output', params: { ...params } });
        const t = terminals.get(params.terminalId)!;
        const exitStatus = await Promise.race([t.exit, Promise.resolve(undefined)]);
        return { output: t.output, truncated: false, ...(exitStatus ? { exitStatus } : {}) };
      })
      .onRequest('terminal/kill', ({ params }) => {
        seen.push({ method: 'terminal/kill', params: { ...params } });
        terminals.get(params.terminalId)!.kill();
        return {};
      })
      .onRequest('terminal/release', ({ params }) => {
        seen.push({ method: 'terminal/release', params: { ...params } });
        terminals.get(params.terminalId)?.kill();
        terminals.delete(params.terminalId);
        return {};
      });
}

const EDITOR_FS_TERMINAL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

describe('dsh acp with a client that offers fs and terminal', { timeout: 90_000 }, () => {
  const fsScript = [
    toolCall('r1', 'read', { file_path: 'a.txt' }),
    toolCall('r2', 'read', { file_path: '../outside.txt' }),
    toolCall('e1', 'edit', { file_path: 'a.txt', old_string: 'unsaved', new_string: 'edited' }),
    toolCall('w1', 'write', { file_path: 'sub/b.txt', content: 'new file\n' }),
    textCall('done'),
  ];
  const seed = (h: Harness): void => {
    writeFileSync(join(h.workspace, 'a.txt'), 'on disk\n');
    writeFileSync(join(h.dir, 'outside.txt'), 'secret outside\n');
  };

  it('reads the unsaved buffer through the client, edits and writes on the disk, refuses an outside path before asking it', async () => {
    const h = harness();
    seed(h);
    const a0 = join(h.workspace, 'a.txt');
    const buffers = new Map([[a0, 'the unsaved buffer\n']]);
    const seen: Recorded[] = [];
    const a = start(h, fsScript, { handlers: editor(buffers, seen) });
    const sid = await run(a, h, EDITOR_FS_TERMINAL);

    // Exactly these requests, in this order: the read and the edit's read; nothing for the outside
    // path, and no write by name (the editor would follow a link swapped in meanwhile).
    expect(seen.map((s) => [s.method, s.params.path])).toEqual([
      ['fs/read_text_file', a0],
      ['fs/read_text_file', a0],
    ]);
    expect(seen.every((s) => s.params.sessionId === sid)).toBe(true);
    // The edit applies to the editor's text and lands on the disk; so does the write.
    expect(readFileSync(a0, 'utf8')).toBe('the edited buffer\n');
    expect(readFileSync(join(h.workspace, 'sub', 'b.txt'), 'utf8')).toBe('new file\n');

    const got = await results(a, h.home);
    expect(got.get('r1')!.content).toContain('1: the unsaved buffer');
    expect(got.get('r2')!.isError).toBe(true);
    // The edit's diff is the buffer's text before and after.
    expect(got.get('e1')!.meta).toEqual({ diffs: [{ path: 'a.txt', oldText: 'the unsaved buffer\n', newText: 'the edited buffer\n' }] });
    expect(got.get('w1')!.content).toContain('Created file');

    // The same script with a client that offers nothing: local tools, the same result shapes,
    // and the outside path refused with the very same result.
    const h2 = harness();
    seed(h2);
    writeFileSync(join(h2.workspace, 'a.txt'), 'the unsaved buffer\n');
    const local = start(h2, fsScript);
    await run(local, h2, {});
    const want = await results(local, h2.home);
    const norm = (r: LoggedResult) => JSON.parse(JSON.stringify(r).replaceAll(h2.dir, 'DIR').replaceAll(h.dir, 'DIR')) as unknown;
    for (const id of ['r1', 'r2', 'e1', 'w1']) expect(norm(got.get(id)!), id).toEqual(norm(want.get(id)!));
    expect(readFileSync(join(h2.workspace, 'a.txt'), 'utf8')).toBe('the edited buffer\n');
  });

  it('a client that offers only reading: reads from its buffers, writes stay local', async () => {
    const h = harness();
    seed(h);
    const a0 = join(h.workspace, 'a.txt');
    const seen: Recorded[] = [];
    const a = start(h, fsScript, { handlers: editor(new Map([[a0, 'the unsaved buffer\n']]), seen) });
    await run(a, h, { fs: { readTextFile: true, writeTextFile: false } });
    expect(seen.map((s) => s.method)).toEqual(['fs/read_text_file']);
    // The edit is wholly local: the disk's text (the client did not offer to take changes).
    const got = await results(a, h.home);
    expect(got.get('e1')!.isError).toBe(true);
    expect(readFileSync(join(h.workspace, 'sub', 'b.txt'), 'utf8')).toBe('new file\n');
  });

  it('bash under danger-full-access runs in the client terminal, embedded in the tool call, with the local environment', async () => {
    const h = harness();
    const seen: Recorded[] = [];
    const script = [
      toolCall('b1', 'bash', { command: 'echo "out [$EDITOR_SECRET_TOKEN]"; echo err >&2; exit 3' }),
      toolCall('b2', 'bash', { command: 'echo started; sleep 30', timeoutMs: 1500 }),
      textCall('done'),
    ];
    const a = start(h, script, {
      args: ['--sandbox', 'danger-full-access'],
      // Full access asks before each command (it runs without a sandbox).
      answer: () => ({ outcome: { outcome: 'selected', optionId: 'allow-once' } }),
      handlers: editor(new Map(), seen, { EDITOR_SECRET_TOKEN: 'editor-only-value' }),
    });
    const sid = await run(a, h, EDITOR_FS_TERMINAL);
    const firstCall = seen.findIndex((s, i) => i > 0 && s.method === 'terminal/create');
    const methods = seen.slice(0, firstCall).map((s) => s.method);
    expect(methods).toEqual(['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']);
    // The second command outlives its timeout: killed in the client, then released.
    expect(seen.slice(firstCall).map((s) => s.method)).toEqual([
      'terminal/create',
      'terminal/wait_for_exit',
      'terminal/kill',
      'terminal/output',
      'terminal/release',
    ]);
    const create = seen[0]!.params as { command: string; args: string[]; cwd: string; sessionId: string };
    expect(create.sessionId).toBe(sid);
    expect(create.cwd).toBe(h.workspace);
    expect(create.command).toBe('env');
    expect(create.args[0]).toBe('-i');
    expect(create.args.at(-1)).toBe('echo "out [$EDITOR_SECRET_TOKEN]"; echo err >&2; exit 3');
    const terminalId = (seen[1]!.params as { terminalId: string }).terminalId;

    const updates = a.updates.filter((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.toolCallId === 'b1');
    expect(updates[0]!.update).toMatchObject({ content: [{ type: 'terminal', terminalId }] });
    const last = updates.at(-1)!.update as { status: string; content: { type: string }[] };
    expect(last.status).toBe('completed');
    expect(last.content).toContainEqual({ type: 'terminal', terminalId });

    const all = await results(a, h.home);
    const got = all.get('b1')!;
    // The editor's own variable does not reach the command: it gets the environment dsh gives.
    expect(got.content).toContain('out []');
    expect(got.content).toContain('err');
    expect(got.content).toContain('[exit code: 3]');
    expect(got.meta).toMatchObject({ exitCode: 3, timedOut: false, ranIn: `acp client terminal ${terminalId}` });
    const late = all.get('b2')!;
    expect(late.isError).toBe(true);
    expect(late.error).toMatchObject({ code: 'BASH_TIMEOUT' });
    expect(late.content).toContain('started');
    expect(late.content).toContain('[timed out after 1500 ms');
  });

  it('bash in a sandboxed mode stays local and sandboxed, though the client offers a terminal', async () => {
    const probe = await probeBubblewrap('bwrap');
    if (!probe.ok) {
      // Without a sandbox backend commands are unconfined anyway; the rule is shown by the test above.
      console.warn(`skipped: bubblewrap cannot run here (${probe.reason})`);
      return;
    }
    const h = harness();
    const seen: Recorded[] = [];
    const script = [toolCall('b1', 'bash', { command: 'echo local; touch /outside-the-sandbox 2>&1; true' }), textCall('done')];
    const a = start(h, script, { handlers: editor(new Map(), seen) });
    await run(a, h, EDITOR_FS_TERMINAL);
    expect(seen).toEqual([]);
    const got = (await results(a, h.home)).get('b1')!;
    expect(got.content).toContain('local');
    expect(got.meta).toMatchObject({ sandbox: { mode: 'workspace-write', enforcement: 'full', backend: 'bubblewrap' } });
    expect(got.meta?.ranIn).toBeUndefined();
    const last = a.updates.filter((u) => u.update.sessionUpdate === 'tool_call_update').at(-1)!.update as { content: { type: string }[] };
    expect(last.content.some((c) => c.type === 'terminal')).toBe(false);
  });
});
