/**
 * `dsh sdk` as a real child process, driven over its standard input and output with a recorded
 * model (`--replay-model`): bad input gets JSON-RPC errors with stable codes and the server keeps
 * serving; one prompt per session at a time; cancel ends the turn `aborted` with the user's
 * cause; close lets the session go; every SDK session is an ordinary stored session that
 * `dsh log check` reads and a later `dsh sdk` (or `dsh run --resume`) continues.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DSH_BIN, makeSandbox, runEnv, spawnDsh, type Child, type Sandbox } from '../../scripts/conformance/scenario.js';
import { SDK_ERROR_CODES } from '../../src/sdk/protocol.js';
import { MODEL, PROVIDER, writeRecording, type RecordedTurn } from './recording.js';

type Msg = {
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data: { code: string } };
  params?: Record<string, unknown>;
};

let boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes) b.dispose();
  boxes = [];
});

function start(turns: readonly RecordedTurn[]): { child: Child; box: Sandbox; rec: string } {
  const box = makeSandbox('/nonexistent-scenario');
  boxes.push(box);
  const rec = join(box.root, 'recorded.jsonl');
  writeRecording(rec, turns);
  const child = spawnDsh(['sdk', '--replay-model', rec, '--sandbox', 'danger-full-access', '--approval', 'never'], box, 60_000);
  return { child, box, rec };
}

let nextId = 100;
async function call(child: Child, method: string, params?: unknown): Promise<Msg> {
  const id = nextId++;
  child.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
  return (await child.waitFor((v) => (v as Msg).id === id, `the response to ${method}`)) as Msg;
}

async function raw(child: Child, line: string): Promise<Msg> {
  const before = child.lines.length;
  child.send(line);
  return (await child.waitFor((v) => 'error' in (v as Msg), 'an error response', before)) as Msg;
}

function status(child: Child, sessionId: string, s: 'idle' | 'running'): Promise<unknown> {
  return child.waitFor(
    (v) => (v as Msg).method === 'session.status' && (v as Msg).params?.sessionId === sessionId && (v as Msg).params?.status === s,
    `session ${s}`,
  );
}

const text = (t: string): { type: 'text'; text: string }[] => [{ type: 'text', text: t }];

function expectError(m: Msg, name: keyof typeof SDK_ERROR_CODES): void {
  expect(m.error, JSON.stringify(m)).toBeDefined();
  expect(m.error!.data.code).toBe(name);
  expect(m.error!.code).toBe(SDK_ERROR_CODES[name]);
}

describe('dsh sdk', () => {
  it('answers bad input with JSON-RPC errors and keeps serving', async () => {
    const { child, box } = start([{ prompt: 'hi', answer: 'hello' }]);
    expectError(await raw(child, '{"jsonrpc":"2.0","id":1,"method":'), 'PARSE_ERROR');
    expectError(await raw(child, '[1,2]'), 'INVALID_REQUEST');
    expectError(await raw(child, '{"jsonrpc":"1.0","id":2,"method":"initialize"}'), 'INVALID_REQUEST');
    expectError(await raw(child, '{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}'), 'INVALID_REQUEST');
    expectError(await call(child, 'session/explode', {}), 'METHOD_NOT_FOUND');
    // A line over the 16 MiB cap is dropped and refused; the next line is read as usual.
    const huge = await raw(child, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"pad":"${'x'.repeat(17 * 1024 * 1024)}"}}`);
    expectError(huge, 'INVALID_REQUEST');
    expect(huge.error!.message).toContain('limit');
    expectError(await call(child, 'session/prompt', { sessionId: 's1', contentBlocks: text('hi') }), 'NOT_INITIALIZED');
    expectError(await call(child, 'initialize', { cwd: 'relative/dir', provider: PROVIDER, model: MODEL }), 'INVALID_PARAMS');
    const missing = await call(child, 'initialize', { cwd: box.cwd, model: MODEL });
    expectError(missing, 'INVALID_PARAMS');
    expect(missing.error!.data).toMatchObject({ path: '$.params.provider' });
    const init = await call(child, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL });
    expect(init.result?.serverInfo).toMatchObject({ name: 'dsh' });
    expectError(await call(child, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL }), 'ALREADY_INITIALIZED');
    expectError(await call(child, 'session/prompt', { sessionId: '../escape', contentBlocks: text('hi') }), 'INVALID_PARAMS');
    expectError(await call(child, 'session/prompt', { sessionId: 's1', contentBlocks: [] }), 'INVALID_PARAMS');
    expectError(await call(child, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'audio' }] }), 'INVALID_PARAMS');
    expectError(await call(child, 'session/cancel', { sessionId: 'never-opened' }), 'SESSION_NOT_FOUND');
    expectError(await call(child, 'session/close', { sessionId: 'never-opened' }), 'SESSION_NOT_FOUND');
    // Still serving: a prompt runs to its answer.
    const p = await call(child, 'session/prompt', { sessionId: 's1', contentBlocks: text('hi') });
    expect(typeof p.result?.messageId).toBe('string');
    await status(child, 's1', 'idle');
    expect(await call(child, 'shutdown')).toMatchObject({ result: {} });
    expect(await child.exited).toBe(0);
  }, 60_000);

  it('refuses a second prompt while the turn runs, cancels it, closes the session', async () => {
    const { child, box } = start([{ prompt: 'long job', hang: true }]);
    await call(child, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL });
    await call(child, 'session/prompt', { sessionId: 'busy', contentBlocks: text('long job') });
    // The recorded call streams "working" and then waits: the turn is running.
    await child.waitFor((v) => JSON.stringify(v).includes('"text":"working"'), 'the streamed chunk');
    expectError(await call(child, 'session/prompt', { sessionId: 'busy', contentBlocks: text('again') }), 'SESSION_BUSY');
    expect(await call(child, 'session/cancel', { sessionId: 'busy' })).toMatchObject({ result: { cancelled: true } });
    const end = (await child.waitFor(
      (v) => ((v as Msg).params?.event as { type?: string } | undefined)?.type === 'turn/end',
      'turn/end',
    )) as Msg;
    expect((end.params!.event as { data: unknown }).data).toEqual({ turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } });
    await status(child, 'busy', 'idle');
    expect(await call(child, 'session/close', { sessionId: 'busy' })).toMatchObject({ result: {} });
    expectError(await call(child, 'session/cancel', { sessionId: 'busy' }), 'SESSION_NOT_FOUND');
    child.endInput();
    expect(await child.exited).toBe(0);
  }, 60_000);

  it('on SIGTERM ends the running turn, closes the log and exits 143', async () => {
    const { child, box } = start([{ prompt: 'long job', hang: true }]);
    await call(child, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL });
    await call(child, 'session/prompt', { sessionId: 'stopped', contentBlocks: text('long job') });
    await child.waitFor((v) => JSON.stringify(v).includes('"text":"working"'), 'the streamed chunk');
    child.kill('SIGTERM');
    expect(await child.exited).toBe(143);
    const path = spawnSync(process.execPath, [DSH_BIN, 'sessions', 'path', 'stopped'], { env: runEnv(box), encoding: 'utf8' });
    const events = readFileSync(path.stdout.trim(), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: unknown });
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', reason: { kind: 'disposed' } } } });
  }, 60_000);

  it('stores every session as an ordinary session: log check, a later dsh sdk and dsh run --resume continue it', async () => {
    const turns: RecordedTurn[] = [
      { prompt: 'first', answer: 'one' },
      { prompt: 'second', answer: 'two' },
      { prompt: 'third', answer: 'three' },
    ];
    const { child, box, rec } = start(turns);
    await call(child, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL });
    await call(child, 'session/prompt', { sessionId: 'kept', contentBlocks: text('first') });
    await status(child, 'kept', 'idle');
    child.endInput();
    expect(await child.exited).toBe(0);

    const env = runEnv(box);
    const path = spawnSync(process.execPath, [DSH_BIN, 'sessions', 'path', 'kept'], { env, encoding: 'utf8' });
    expect(path.status, path.stderr).toBe(0);
    const file = path.stdout.trim();
    expect(existsSync(file)).toBe(true);
    const check = spawnSync(process.execPath, [DSH_BIN, 'log', 'check', file], { env, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);

    // A second server reopens it: turn 2 continues the log (the replay serves its second call).
    const again = spawnDsh(['sdk', '--replay-model', rec, '--sandbox', 'danger-full-access', '--approval', 'never'], box, 60_000);
    await call(again, 'initialize', { cwd: box.cwd, provider: PROVIDER, model: MODEL });
    const p = await call(again, 'session/prompt', { sessionId: 'kept', contentBlocks: text('second') });
    expect(p.result).toBeDefined();
    const start2 = (await again.waitFor(
      (v) => ((v as Msg).params?.event as { type?: string } | undefined)?.type === 'turn/start',
      'turn/start',
    )) as Msg;
    expect((start2.params!.event as { data: unknown }).data).toEqual({ turn: 2 });
    await status(again, 'kept', 'idle');
    again.endInput();
    expect(await again.exited).toBe(0);
    // dsh run --resume continues the same log (turn 3), its stream in dsh's headless format.
    const run = spawnSync(
      process.execPath,
      [
        DSH_BIN,
        'run',
        '--resume',
        'kept',
        '--replay-model',
        rec,
        '--sandbox',
        'danger-full-access',
        '--approval',
        'never',
        '--output-format',
        'stream-json',
        'third',
      ],
      { env, encoding: 'utf8', cwd: box.cwd },
    );
    expect(run.status, run.stderr).toBe(0);
    const stream = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; sessionId: string; event?: { type: string; data: unknown } });
    expect(stream.every((l) => l.sessionId === 'kept')).toBe(true);
    expect(stream.find((l) => l.event?.type === 'turn/start')?.event?.data).toEqual({ turn: 3 });
    // The replay serves its calls in recorded order: this third request gets the first answer.
    expect(stream.at(-1)).toEqual({ type: 'result', sessionId: 'kept', output: 'one', usage: { inputTokens: 3, outputTokens: 2 } });
    const log = readFileSync(file, 'utf8');
    expect(log).toContain('"text":"third"');
    expect(log).toContain('"text":"first"');
    expect(log).toContain('"text":"second"');
    expect(JSON.parse(log.slice(0, log.indexOf('\n')))).toMatchObject({ id: 'kept', cwd: box.cwd });
  }, 90_000);
});
