/**
 * The live plugin end to end: a real agent (scripted model), the official exporter, a local
 * receiver. Live spans must equal the offline export of the same log.
 */
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent, Plugin } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter, textResponse, toolCallResponse, type ScriptEntry } from '../../src/llm/scripted.js';
import { Session } from '../../src/session/session.js';
import { exportSessionToOtlp, otel, type OtelExportError, type OtelPluginOptions } from '../../src/observability/index.js';
import { closedPortUrl, startReceiver, type Receiver } from './support/receiver.js';

function agentWith(script: ScriptEntry[], plugins: Plugin[], session?: Session): Agent {
  let now = 2_000_000;
  return createAgent({
    model: 'scripted:model-live',
    adapters: new ScriptedAdapter(script, { providers: ['scripted'] }),
    session: session ?? Session.create({ id: 'sess-live', clock: () => (now += 7) }),
    tools: [{ name: 'echo', description: 'echo', parameters: z.object({ s: z.string() }), execute: (a: { s: string }) => a.s }],
    retry: { sleep: async () => undefined, random: () => 0.5 },
    plugins,
  });
}

const SCRIPT: ScriptEntry[] = [
  toolCallResponse([{ id: 'c1', name: 'echo', args: { s: 'hi' } }], { usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 10 } }),
  [{ type: 'finish', reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down' } } }],
  textResponse('done', { usage: { inputTokens: 6, outputTokens: 1 } }),
  textResponse('second turn'),
];

/** An agent with the plugin, through the two turns of SCRIPT, flushed. */
async function twoTurns(opts: OtelPluginOptions): Promise<{ tel: ReturnType<typeof otel>; agent: Agent }> {
  const tel = otel(opts);
  const agent = agentWith(SCRIPT, [tel]);
  agent.prompt('first');
  await agent.whenIdle();
  agent.prompt('second');
  await agent.whenIdle();
  await tel.flush();
  return { tel, agent };
}

let live: Receiver;
let offline: Receiver;
beforeEach(async () => {
  live = await startReceiver();
  offline = await startReceiver();
});
afterEach(async () => {
  await live.close();
  await offline.close();
});

describe('otel() live export', () => {
  it('exports each turn when it ends, exactly as the offline export of the same log', async () => {
    const { tel, agent } = await twoTurns({ url: live.url, content: 'full' });

    // One request per turn, sent as each turn ended.
    expect(live.requests).toHaveLength(2);
    expect(tel.stats).toEqual({ turns: 2, spans: 7, failures: 0 });
    expect(live.spans().map((s) => s.name)).toEqual([
      'invoke_agent dsh',
      'chat model-live',
      'execute_tool echo',
      'chat model-live',
      'chat model-live',
      'invoke_agent dsh',
      'chat model-live',
    ]);

    const summary = await exportSessionToOtlp(agent.session, { url: offline.url, content: 'full' });
    expect(summary).toMatchObject({ turns: 2, spans: 7 });
    expect(offline.spans()).toEqual(live.spans());
    await agent.dispose();
    await tel.shutdown();
  });

  it("with traces: 'session', sends the turns as they end and the session span at shutdown, as the offline export", async () => {
    const { tel, agent } = await twoTurns({ url: live.url, traces: 'session' });
    expect(live.spans().map((s) => s.name)).not.toContain('session dsh');
    await agent.dispose();
    await tel.shutdown();
    const got = live.spans();
    expect(got.at(-1)!.name).toBe('session dsh');
    expect(new Set(got.map((s) => s.traceId)).size).toBe(1);

    const summary = await exportSessionToOtlp(agent.session, { url: offline.url, traces: 'session' });
    expect(summary).toMatchObject({ turns: 2, traces: 1, spans: 8 });
    const byId = (list: typeof got) => [...list].sort((a, b) => a.spanId.localeCompare(b.spanId));
    expect(byId(offline.spans())).toEqual(byId(got));
  });

  it('on dispose mid-turn, exports the turn in flight ended at its last event and marked incomplete', async () => {
    const tel = otel({ url: live.url });
    const agent = agentWith(
      [
        {
          hangAfter: [
            { type: 'block-start', index: 0, blockType: 'text' },
            { type: 'text-delta', index: 0, text: 'thinking' },
          ],
        },
      ],
      [],
    );
    const dispose = agent.use(tel);
    const streaming = new Promise<void>((resolve) => {
      const off = agent.session.subscribe((e) => {
        if (e.type === 'assistant/chunk' && e.data.chunk.type === 'text-delta') {
          off();
          resolve();
        }
      });
    });
    agent.prompt('go');
    await streaming;
    const lastTime = agent.session.at(agent.session.length - 1)!.time;
    dispose();
    await tel.flush();

    const spans = live.spans();
    expect(spans.map((s) => [s.name, s.attributes['dsh.incomplete'], s.endMs])).toEqual([
      ['invoke_agent dsh', true, lastTime],
      ['chat model-live', true, lastTime],
    ]);
    expect(spans[0]!.attributes['dsh.turn.end_reason']).toBeUndefined();

    // Disposed: the turn's real end is not exported again live.
    agent.cancel();
    await agent.whenIdle();
    await tel.flush();
    expect(live.requests).toHaveLength(1);
    await agent.dispose();
    await tel.shutdown();
  });

  it('does not export turns already in the log when it is installed (a resumed session)', async () => {
    const first = agentWith([textResponse('one')], []);
    first.prompt('earlier');
    await first.whenIdle();
    const tel = otel({ url: live.url });
    const resumed = agentWith([textResponse('two')], [tel], first.session);
    resumed.prompt('now');
    await resumed.whenIdle();
    await tel.flush();
    expect(
      live
        .spans()
        .filter((s) => s.name === 'invoke_agent dsh')
        .map((s) => s.attributes['dsh.turn']),
    ).toEqual([2]);
    await tel.shutdown();
  });

  it('reports a failed export to onError with a typed error, and keeps going', async () => {
    const url = await closedPortUrl();
    const errors: [OtelExportError, { sessionId: string; turn: number }][] = [];
    const opts: OtelPluginOptions = { url, timeoutMillis: 300, onError: (e, info) => void errors.push([e, info]) };
    const tel = otel(opts);
    const agent = agentWith([textResponse('a'), textResponse('b')], [tel]);
    agent.prompt('one');
    await agent.whenIdle();
    agent.prompt('two');
    await agent.whenIdle();
    await tel.flush();
    expect(errors.map(([e, info]) => [e.code, info])).toEqual([
      ['ENDPOINT_UNREACHABLE', { sessionId: 'sess-live', turn: 1 }],
      ['ENDPOINT_UNREACHABLE', { sessionId: 'sess-live', turn: 2 }],
    ]);
    expect(tel.stats).toEqual({ turns: 0, spans: 0, failures: 2 });
    await tel.shutdown();
  });

  it('without onError, reports failures on agent/error', async () => {
    live.respondWith(400, 'no');
    const tel = otel({ url: live.url });
    const agent = agentWith([textResponse('a')], [tel]);
    const seen: unknown[] = [];
    agent.on('agent/error', (p) => void seen.push(p.error));
    agent.prompt('one');
    await agent.whenIdle();
    await tel.flush();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ code: 'HTTP_STATUS', details: { status: 400 } });
    await tel.shutdown();
  });

  it('refuses bad options when created', () => {
    expect(() => otel({})).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
