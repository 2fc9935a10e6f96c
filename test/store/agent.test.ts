/**
 * The store under the agent loop, through `persist(stored)`: checkpoints land before the model
 * call and before the tool body (checked by reading the file from inside the adapter and the
 * tool), and a full disk fails closed and reaches `agent/error` without losing an event.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { createAgent, ScriptedAdapter, textResponse, toolCallResponse, loadJsonl, type GenerateRequest } from '../../src/index.js';
import { SessionStore, StoreError, persist, type StoredSession } from '../../src/store/index.js';
import { fileRecords, fixedClock } from './support/events.js';
import { FaultyIo } from './support/faulty-io.js';
import { tempDir } from './support/tmp.js';

/** Byte offset just past the first line whose record satisfies `pred`, or -1. */
function endOfLine(path: string, pred: (r: Record<string, unknown>) => boolean): number {
  const text = readFileSync(path);
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf(0x0a, pos);
    if (nl < 0) return -1;
    const r = JSON.parse(text.subarray(pos, nl).toString('utf8')) as Record<string, unknown>;
    if (pred(r)) return nl + 1;
    pos = nl + 1;
  }
  return -1;
}

async function open(io: FaultyIo): Promise<StoredSession> {
  const st = new SessionStore({ root: tempDir(), clock: fixedClock(), io });
  return st.create({ cwd: '/tmp/project', id: 'agent' });
}

describe('persist(stored)', () => {
  it('makes the prompt durable before the model call and the tool/call durable before the tool body', async () => {
    const io = new FaultyIo();
    const stored = await open(io);
    const seen: { beforeModel?: boolean; beforeTool?: boolean } = {};
    const model = new ScriptedAdapter([
      (req: GenerateRequest) => {
        const end = endOfLine(stored.path, (r) => r.type === 'user/message');
        seen.beforeModel = end > 0 && io.syncedSizes.some((n) => n >= end) && req.messages.length === 1;
        return toolCallResponse([{ id: 'call_1', name: 'probe', args: {} }]);
      },
      textResponse('done'),
    ]);
    const agent = createAgent({
      model: 'scripted:demo',
      adapters: model,
      session: stored.session,
      plugins: [persist(stored)],
      tools: [
        {
          name: 'probe',
          description: 'checks the log',
          parameters: z.object({}),
          execute: () => {
            const end = endOfLine(stored.path, (r) => r.type === 'tool/call' && (r.data as { callId: string }).callId === 'call_1');
            seen.beforeTool = end > 0 && io.syncedSizes.some((n) => n >= end);
            return 'ok';
          },
        },
      ],
    });
    agent.prompt('go');
    await agent.whenIdle();
    expect(seen).toEqual({ beforeModel: true, beforeTool: true });
    // The turn/end checkpoint: everything is on disk once the turn is over and flushed.
    await stored.close();
    const loaded = loadJsonl(readFileSync(stored.path, 'utf8'));
    expect(loaded.warnings).toEqual([]);
    expect(loaded.eventCount).toBe(agent.session.length);
    expect(JSON.stringify(loaded.session.events.slice(0, loaded.eventCount))).toBe(JSON.stringify(agent.session.events));
    await agent.dispose();
  });

  it('a full disk fails the tool closed, reaches agent/error, and loses nothing once space returns', async () => {
    const io = new FaultyIo();
    const stored = await open(io);
    let ran = false;
    const model = new ScriptedAdapter([
      () => {
        io.spaceLeft = 0; // the disk fills while the model streams
        return toolCallResponse([{ id: 'call_1', name: 'act', args: {} }]);
      },
      textResponse('never'),
    ]);
    const agent = createAgent({
      model: 'scripted:demo',
      adapters: model,
      session: stored.session,
      plugins: [persist(stored)],
      retry: false,
      tools: [{ name: 'act', description: 'has an effect', parameters: z.object({}), execute: () => ((ran = true), 'done') }],
    });
    const errors: unknown[] = [];
    agent.on('agent/error', ({ error }) => {
      errors.push(error);
    });
    agent.prompt('go');
    await agent.whenIdle();
    expect(ran).toBe(false);
    const result = agent.session.events.find((e) => e.type === 'tool/result');
    expect((result!.data as { error?: { code: string } }).error?.code).toBe('WRITE_FAILED');
    // The next model call could not checkpoint either: the turn ended with the store's code.
    const end = agent.session.events.find((e) => e.type === 'turn/end');
    expect(end?.data).toMatchObject({ reason: { kind: 'error', error: { code: 'WRITE_FAILED' } } });
    expect(errors.some((e) => e instanceof StoreError && e.code === 'WRITE_FAILED' && e.details.errno === 'ENOSPC')).toBe(true);

    io.spaceLeft = undefined;
    expect(await stored.close()).toMatchObject({ ok: true, durableSeq: agent.session.length });
    expect(fileRecords(readFileSync(stored.path, 'utf8')).at(-1)).toMatchObject({ type: 'turn/end', seq: agent.session.length - 1 });
    const loaded = loadJsonl(readFileSync(stored.path, 'utf8'));
    expect(loaded.warnings).toEqual([]);
    expect(JSON.stringify(loaded.session.events.slice(0, loaded.eventCount))).toBe(JSON.stringify(agent.session.events));
    await agent.dispose();
  });

  it('refuses an agent whose session is not open in the store', async () => {
    const st = new SessionStore({ root: tempDir() });
    expect(() => createAgent({ model: 'scripted:demo', adapters: new ScriptedAdapter([]), plugins: [persist(st)] })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});
