/**
 * Drives the real `dsh acp` (the CLI built from the current sources) as a subprocess with the
 * ACP SDK's client side. The model is a script of recorded-stream entries (`--replay-model` of a
 * header-only log, `--replay-override` holding the calls), so no provider and no key are needed;
 * DSH_HOME is a private temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
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
