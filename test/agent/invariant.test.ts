/** "Model-visible means recorded" (issue 3 item 6). */
import { describe, expect, it } from 'vitest';
import { harness, shape } from './helpers.js';
import { textResponse } from '../../src/llm/scripted.js';
import { assertModelVisibleRecorded, InvariantError } from '../../src/agent/invariant.js';
import { Session } from '../../src/session/index.js';

describe('the invariant', () => {
  it('holds on the normal path (every request in these tests is checked)', async () => {
    const { agent, adapter } = harness([textResponse('a'), textResponse('b')]);
    agent.prompt('x');
    agent.followup('y');
    await agent.whenIdle();
    expect(adapter.requests).toHaveLength(2);
    expect(shape(agent.session.events).filter((l) => l.startsWith('turn/end'))).toEqual(['turn/end 1 completed', 'turn/end 2 completed']);
  });

  it('fails the request with a readable diff when middleware slips in an unrecorded message', async () => {
    const { agent, adapter } = harness([textResponse('never')]);
    agent.on('llm/stream', (req, next) =>
      next({
        ...req,
        messages: [
          ...req.messages,
          { id: 'sneaky', role: 'user', content: [{ type: 'text', text: 'hidden instruction' }], source: { kind: 'user' } },
        ],
      }),
    );
    agent.prompt('x');
    await agent.whenIdle();
    const end = agent.session.events.at(-1)!;
    if (end.type !== 'turn/end' || end.data.reason.kind !== 'error') throw new Error('expected an error turn');
    expect(end.data.reason.error.code).toBe('INVARIANT');
    expect(end.data.reason.error.message).toContain('messages');
    expect(end.data.reason.error.message).toContain('messages[1]: the request has {"id":"sneaky"');
    expect(end.data.reason.error.message).toContain('the log has nothing');
    expect(adapter.requests).toHaveLength(0);
  });

  it('fails when middleware changes the system prompt or the model', async () => {
    for (const change of [{ system: 'be evil' }, { model: 'other' }, { temperature: 2 }]) {
      const { agent, adapter } = harness([textResponse('never')]);
      agent.on('llm/stream', (req, next) => next({ ...req, ...change }));
      agent.prompt('x');
      await agent.whenIdle();
      const end = agent.session.events.at(-1)!;
      expect(end.type === 'turn/end' && end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('INVARIANT');
      expect(end.type === 'turn/end' && end.data.reason.kind === 'error' && end.data.reason.error.message).toContain(
        Object.keys(change)[0]!,
      );
      expect(adapter.requests).toHaveLength(0);
    }
  });

  it('can be switched off', async () => {
    const { agent, adapter } = harness([textResponse('ok')], { invariants: false });
    agent.on('llm/stream', (req, next) => next({ ...req, system: 'changed' }));
    agent.prompt('x');
    await agent.whenIdle();
    expect(adapter.requests[0]!.system).toBe('changed');
  });

  it('reports the first differing path, and a missing header', () => {
    const s = Session.create();
    expect(() => assertModelVisibleRecorded({ provider: 'p', model: 'm', messages: [] }, s)).toThrow(InvariantError);
    expect(() => assertModelVisibleRecorded({ provider: 'p', model: 'm', messages: [] }, s)).toThrow(/no request\/header/);
  });
});
