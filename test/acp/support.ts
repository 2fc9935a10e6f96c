/**
 * Drives the real `dsh acp` (the CLI built from the current sources) as a subprocess with the
 * ACP SDK's client side. The model is a script of recorded-stream entries (`--replay-model` of a
 * header-only log, `--replay-override` holding the calls), so no provider and no key are needed;
 * DSH_HOME is a private temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, expect } from 'vitest';
import {
  client as acpClient,
  ndJsonStream,
  type ClientConnection,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk/unstable';
import type { StreamChunk } from '../../src/model/stream.js';
import { builtBin } from '../cli/support/run.js';

export function textCall(text: string, reasoning?: string): { kind: 'chunks'; chunks: StreamChunk[] } {
  const chunks: StreamChunk[] = [];
  let i = 0;
  if (reasoning !== undefined) {
    chunks.push(
      { type: 'block-start', index: i, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: i, text: reasoning },
      { type: 'block-end', index: i, block: { type: 'reasoning', text: reasoning } },
    );
    i++;
  }
  // Two deltas: the client must see the text streamed, not only the whole block.
  const half = Math.ceil(text.length / 2);
  chunks.push(
    { type: 'block-start', index: i, blockType: 'text' },
    { type: 'text-delta', index: i, text: text.slice(0, half) },
    { type: 'text-delta', index: i, text: text.slice(half) },
    { type: 'block-end', index: i, block: { type: 'text', text } },
    { type: 'usage', usage: { inputTokens: 100, outputTokens: 7 } },
    { type: 'finish', reason: { kind: 'stop' } },
  );
  return { kind: 'chunks', chunks };
}

export function toolCall(id: string, name: string, args: unknown): { kind: 'chunks'; chunks: StreamChunk[] } {
  const json = JSON.stringify(args);
  return {
    kind: 'chunks',
    chunks: [
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id, name, argumentsDelta: json },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id, name, arguments: json } },
      { type: 'usage', usage: { inputTokens: 50, outputTokens: 10 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ],
  };
}

export type ClientApp = ReturnType<typeof acpClient>;

export interface Harness {
  home: string;
  workspace: string;
  dir: string;
}

export function harness(): Harness {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-')));
  const home = join(dir, 'home');
  const workspace = join(dir, 'ws');
  mkdirSync(home);
  mkdirSync(workspace);
  return { dir, home, workspace };
}

export interface Agent {
  conn: ClientConnection;
  proc: ChildProcess;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  stderr: () => string;
  close(): Promise<void>;
}

/** Start `dsh acp` serving `script` (one entry per model call); `answer` decides permission requests. */
export function startAgent(
  h: Harness,
  script: unknown[],
  opts: {
    answer?: (r: RequestPermissionRequest) => RequestPermissionResponse;
    args?: string[];
    name?: string;
    /** More client handlers (a client that offers fs or terminal). */
    handlers?: (app: ClientApp) => ClientApp;
  } = {},
): Agent {
  const name = opts.name ?? 'script';
  const log = join(h.dir, `${name}.jsonl`);
  writeFileSync(
    log,
    `${JSON.stringify({ type: 'session', version: 0, id: `rec-${name}`, createdAt: 1, cwd: h.workspace, delegationDepth: 0 })}\n`,
  );
  const override = join(h.dir, `${name}.override.json`);
  writeFileSync(override, JSON.stringify(script));
  const proc = spawn(
    process.execPath,
    [builtBin(), 'acp', '--replay-model', log, '--replay-override', override, '--sandbox', 'workspace-write', ...(opts.args ?? [])],
    {
      cwd: h.workspace,
      env: { ...process.env, DSH_HOME: h.home, DSH_MODEL: '', NO_COLOR: '1', DEEPSEEK_API_KEY: undefined },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const base = acpClient({ name: 'test-client' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissions.push(params);
      return opts.answer ? opts.answer(params) : { outcome: { outcome: 'cancelled' } };
    });
  const app = opts.handlers ? opts.handlers(base) : base;
  const conn = app.connect(
    ndJsonStream(Writable.toWeb(proc.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(proc.stdout!) as ReadableStream<Uint8Array>),
  );
  return {
    conn,
    proc,
    updates,
    permissions,
    stderr: () => err,
    async close() {
      const exited = new Promise<void>((r) => (proc.exitCode !== null ? r() : proc.once('exit', () => r())));
      proc.stdin!.end();
      conn.close();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A `startAgent` whose agents are all closed after each test (call it once, at a test file's top
 * level): a failed test must not leave a `dsh acp` process holding its session's lock.
 */
export function agentsClosedAfterEach(): typeof startAgent {
  let running: Agent[] = [];
  afterEach(async () => {
    await Promise.all(running.map((a) => a.close()));
    running = [];
  });
  return (...args) => {
    const a = startAgent(...args);
    running.push(a);
    return a;
  };
}

/** A provider key as a user's config holds it: no text it reaches may show it. */
export const SECRET = 'sk-secret-4f1c9e-provider-key';

/** The client capabilities of an editor that offers its file system, reads and writes. */
export const EDITOR_FS = { fs: { readTextFile: true, writeTextFile: true } };

/** initialize (offering `clientCapabilities`), session/new in the workspace, one prompt run to its end. */
export async function run(a: Agent, h: Harness, clientCapabilities: Record<string, unknown>, text = 'go'): Promise<string> {
  await a.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities });
  const { sessionId } = await a.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
  const r = await a.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  expect(r.stopReason).toBe('end_turn');
  return sessionId;
}

export interface LoggedResult {
  callId: string;
  content: string;
  isError: boolean;
  error: unknown;
  meta: Record<string, unknown> | undefined;
}

/** The texts of every stored session under `home` (stops the agent first, so the logs are complete). */
export async function sessionLogs(a: Agent, home: string): Promise<string[]> {
  await a.close();
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.jsonl') && files.push(join(d, e.name));
  };
  walk(join(home, 'sessions'));
  return files.map((f) => readFileSync(f, 'utf8'));
}

/** The text of the one stored session under `home` (stops the agent first, so the log is complete). */
export async function sessionLog(a: Agent, home: string): Promise<string> {
  const logs = await sessionLogs(a, home);
  expect(logs).toHaveLength(1);
  return logs[0]!;
}

/** The tool results of one session log, by call id. */
export function loggedResults(log: string): Map<string, LoggedResult> {
  const out = new Map<string, LoggedResult>();
  for (const line of log.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { type: string; data: Record<string, unknown> };
    if (e.type !== 'tool/result') continue;
    const block = (e.data.message as { content: { toolCallId: string; isError?: boolean; content: { text: string }[] }[] }).content[0]!;
    out.set(block.toolCallId, {
      callId: block.toolCallId,
      content: block.content.map((c) => c.text).join(''),
      isError: block.isError === true,
      error: e.data.error,
      meta: e.data.meta as Record<string, unknown> | undefined,
    });
  }
  return out;
}

/** The tool results of the one stored session under `home`, by call id. */
export async function results(a: Agent, home: string): Promise<Map<string, LoggedResult>> {
  return loggedResults(await sessionLog(a, home));
}
