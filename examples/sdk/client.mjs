#!/usr/bin/env node
// Drive dsh from a Node program over the dsh SDK protocol (docs/sdk.md): start `dsh sdk`,
// initialize it, send one prompt, print the streamed answer as it arrives, then shut down.
//
//   node examples/sdk/client.mjs WORKSPACE "PROMPT" [extra dsh sdk flags…]
//
// DSH_COMMAND names the dsh to start (default: `dsh` on PATH), e.g. "node bin/dsh.js".
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

const [workspace, prompt, ...flags] = process.argv.slice(2);
if (!workspace || !prompt) {
  console.error('usage: client.mjs WORKSPACE PROMPT [dsh sdk flags…]');
  process.exit(2);
}
const [command, ...prefix] = (process.env.DSH_COMMAND ?? 'dsh').split(' ');
const dsh = spawn(command, [...prefix, 'sdk', ...flags], { stdio: ['pipe', 'pipe', 'inherit'] });

// One pending promise per request id; notifications go to the listeners.
let nextId = 1;
const pending = new Map();
const listeners = new Set();
createInterface({ input: dsh.stdout }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id !== undefined && pending.has(msg.id)) {
    const { ok, fail } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) fail(new Error(`${msg.error.data?.code ?? msg.error.code}: ${msg.error.message}`));
    else ok(msg.result);
  } else if (msg.method) for (const l of listeners) l(msg);
});

function request(method, params) {
  const id = nextId++;
  dsh.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}

const sessionId = `example-${randomUUID()}`;
const done = new Promise((ok) => {
  let ran = false;
  listeners.add(({ method, params }) => {
    if (params.sessionId !== sessionId) return;
    if (method === 'session.status') {
      if (params.status === 'running') ran = true;
      else if (ran) ok();
      return;
    }
    const e = params.event;
    // The answer streams as text deltas; tool calls and turn ends are events of their own.
    if (e.type === 'assistant/chunk' && e.data.chunk.type === 'text-delta') process.stdout.write(e.data.chunk.text);
    if (e.type === 'tool/call') process.stderr.write(`\n[tool ${e.data.name}]\n`);
    if (e.type === 'turn/end') process.stderr.write(`\n[turn ${e.data.turn} ended: ${e.data.reason.kind}]\n`);
  });
});

const init = await request('initialize', { cwd: resolve(workspace), provider: 'deepseek', model: 'deepseek-v4-flash' });
process.stderr.write(`[dsh ${init.serverInfo.version}, model ${init.model}, session ${sessionId}]\n`);
await request('session/prompt', { sessionId, contentBlocks: [{ type: 'text', text: prompt }] });
await done;
await request('shutdown');
dsh.stdin.end();
