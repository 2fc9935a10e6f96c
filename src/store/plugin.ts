/**
 * `persist(stored)`: the agent's checkpoint policy, for any store (`OpenSession`). The writer already puts every committed
 * event in the file by the end of its event-loop iteration; this plugin adds the points where the agent
 * waits for the disk (fsync) before doing something that cannot be taken back:
 *
 * - before each model call (`llm/stream`): the request the model sees is on disk first;
 * - before each tool body (`tools/execute`): the `tool/call` is durable before the tool can act,
 *   so after a crash a started call is never mistaken for one that never ran (crash repair then
 *   says "outcome unknown", not "not started");
 * - plus, from the writer, at every `turn/end` and on close.
 *
 * Checkpoints fail closed: if the log cannot be made durable, the model call fails with an
 * `LlmError` and the tool is not run (a `ToolError`), both carrying the store's error code, and
 * every write failure is reported on `agent/error`. The events stay queued; the next checkpoint
 * retries.
 */
import { LlmError } from '../model/failure.js';
import { ToolError } from '../tools/types.js';
import type { Plugin } from '../agent/context.js';
import '../llm/hooks.js';
import '../tools/hooks.js';
import '../agent/hooks.js';
import { StoreError } from './errors.js';
import type { OpenSession, Store } from './interface.js';

/** A store has `handle`; an open session has `flush` (any implementation of either interface). */
const isStore = (t: OpenSession | Store): t is Store => typeof (t as Store).handle === 'function';

export function persist(target: OpenSession | Store): Plugin {
  return (host) => {
    const stored = isStore(target) ? target.handle(host.session) : target;
    if (stored === undefined || stored.session !== host.session) {
      throw new StoreError(
        'INVALID_ARGUMENT',
        `persist(): the agent's session ${host.session.id} is not open in this store; create or open it there and pass it to createAgent`,
        {
          sessionId: host.session.id,
        },
      );
    }
    host.on(
      'llm/stream',
      async (request, next) => {
        const r = await stored.flush();
        if (!r.ok)
          throw new LlmError(
            { code: r.error.code, message: `the session log could not be made durable before the model call: ${r.error.message}` },
            { cause: r.error },
          );
        return next(request);
      },
      { name: 'store-checkpoint' },
    );
    host.on(
      'tools/execute',
      async (payload, next) => {
        const r = await stored.flush();
        if (!r.ok)
          throw new ToolError(
            r.error.code,
            `${payload.call.name} was not run: the session log could not be made durable first: ${r.error.message}`,
            undefined,
            { cause: r.error },
          );
        // Cancelled while we waited for the disk: the body never started.
        if (payload.ctx.signal.aborted) throw new ToolError('ABORTED_BEFORE_DISPATCH', 'tool call aborted before dispatch');
        return next(payload);
      },
      { name: 'store-checkpoint' },
    );
    return stored.onError((error) => {
      const t = host.session.trace;
      host.agent.bus.emit('agent/error', { agent: host.agent, turn: t.openTurn ?? t.lastTurn, step: t.openStep ?? 0, error });
    });
  };
}
