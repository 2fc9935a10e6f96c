/** Every inbox path (issue 3 item 2). */
import { describe, expect, it } from 'vitest';
import { deferred, harness, shape, tick } from './helpers.js';
import { textResponse, ScriptedAdapter } from '../../src/llm/scripted.js';
import { userMessage } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { Inbox, InboxError } from '../../src/agent/inbox.js';
import { Session, encodeJsonl, loadJsonl } from '../../src/session/index.js';
import type { GenerateRequest } from '../../src/model/request.js';

const userTexts = (r: GenerateRequest): string[] =>
  r.messages
    .filter((m) => m.role === 'user' && m.content[0]?.type === 'text')
    .map((m) => (m.content[0]?.type === 'text' ? m.content[0].text : ''));

describe('followup', () => {
  it('each followup becomes the sole ordinary message of its own turn, in order', async () => {
    const { agent, adapter } = harness([textResponse('r1'), textResponse('r2'), textResponse('r3')]);
    agent.followup('a');
    agent.followup('b');
    agent.followup('c');
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('user') || l.startsWith('turn/start'))).toEqual([
      'turn/start 1',
      'user a',
      'turn/start 2',
      'user b',
      'turn/start 3',
      'user c',
    ]);
    expect(userTexts(adapter.requests[2]!)).toEqual(['a', 'b', 'c']);
  });
});

describe('steer', () => {
  it('while idle starts a turn at once', async () => {
    const { agent } = harness([textResponse('ok')]);
    agent.steer('steered');
    expect(agent.status).toBe('running');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toContain('user steered');
  });

  it('while running is consumed at the next step boundary of the same turn', async () => {
    const gate = deferred();
    const { agent, adapter } = harness([
      async function* () {
        await gate.promise;
        yield* textResponse('first');
      },
      textResponse('second'),
    ]);
    agent.prompt('start');
    await tick();
    agent.steer('change course');
    gate.resolve();
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user start',
      'header initial',
      'assistant first',
      'step/end 1.1',
      'step/start 1.2',
      'user change course',
      'assistant second',
      'step/end 1.2',
      'turn/end 1 completed',
    ]);
    expect(userTexts(adapter.requests[1]!)).toEqual(['start', 'change course']);
  });
});

describe('inject', () => {
  it('while idle waits without waking, then enters with the next woken step, after the prompt', async () => {
    const { agent, adapter } = harness([textResponse('ok')]);
    agent.inject('context: the repo is a monorepo');
    await tick();
    expect(agent.status).toBe('idle');
    expect(agent.session.events.some((e) => e.type === 'turn/start')).toBe(false);
    agent.prompt('do it');
    await agent.whenIdle();
    expect(userTexts(adapter.requests[0]!)).toEqual(['do it', 'context: the repo is a monorepo']);
  });

  it('while running enters at the next pre-step', async () => {
    const gate = deferred();
    const { agent, adapter } = harness([
      async function* () {
        await gate.promise;
        yield* [
          { type: 'block-start' as const, index: 0, blockType: 'tool-call' as const },
          { type: 'tool-call-delta' as const, index: 0, id: 'c', name: 'nothing', argumentsDelta: '{}' },
          { type: 'block-end' as const, index: 0, block: { type: 'tool-call' as const, id: 'c', name: 'nothing', arguments: '{}' } },
          { type: 'finish' as const, reason: { kind: 'tool-calls' as const } },
        ];
      },
      textResponse('done'),
    ]);
    agent.prompt('start');
    await tick();
    agent.inject('late context');
    gate.resolve();
    await agent.whenIdle();
    expect(userTexts(adapter.requests[1]!)).toEqual(['start', 'late context']);
  });
});

describe('durability', () => {
  it('every inbox change is logged before the projection changes', () => {
    const s = Session.create();
    const inbox = new Inbox(s);
    const seenAtAppend: number[] = [];
    s.subscribe((e) => {
      if (e.type === 'agent/inbox/spliced') seenAtAppend.push(inbox.nextTurn.length);
    });
    inbox.append('next-turn', userMessage('a'));
    inbox.append('next-turn', userMessage('b'));
    inbox.claim('next-turn', 1);
    // Observers saw the state before each splice applied.
    expect(seenAtAppend).toEqual([0, 1, 2]);
    expect(inbox.nextTurn.map((m) => m.content[0])).toEqual([{ type: 'text', text: 'b' }]);
  });

  it('pending input survives a resume, including an idle inject with no turn', async () => {
    const s = Session.create();
    const a = createAgent({ model: 'scripted:m', adapters: new ScriptedAdapter([]), session: s });
    a.inject('remember this');
    // Write the log out and read it back: a new process.
    const loaded = loadJsonl(encodeJsonl(s.header, s.events)).session;
    const adapter = new ScriptedAdapter([textResponse('ok')]);
    const b = createAgent({ model: 'scripted:m', adapters: adapter, session: loaded });
    expect(b.inbox.nextStep.map((m) => m.content[0])).toEqual([{ type: 'text', text: 'remember this' }]);
    b.prompt('go');
    await b.whenIdle();
    expect(userTexts(adapter.requests[0]!)).toEqual(['go', 'remember this']);
  });

  it('a fork child starts with an empty inbox', () => {
    const s = Session.create();
    const inbox = new Inbox(s);
    inbox.append('next-turn', userMessage('pending in parent'));
    const child = s.fork();
    expect(new Inbox(child).size).toBe(0);
    expect(new Inbox(s).size).toBe(1);
  });

  it('refuses a duplicate message id across both lists', () => {
    const inbox = new Inbox(Session.create());
    const m = userMessage('x');
    inbox.append('next-turn', m);
    expect(() => inbox.append('next-step', m)).toThrow(InboxError);
    expect(inbox.size).toBe(1);
  });

  it('remove and clear record outcome canceled and discard; claim is a pure deletion', () => {
    const s = Session.create();
    const discarded: string[] = [];
    const inbox = new Inbox(s, { discarded: (m) => void discarded.push(m.id) });
    const a = inbox.append('next-turn', userMessage('a'));
    inbox.append('next-step', userMessage('b'));
    inbox.append('next-turn', userMessage('c'));
    inbox.remove(a.id);
    inbox.claim('next-turn', 1);
    inbox.append('next-step', userMessage('d'));
    inbox.clear();
    const splices = s.events.filter((e) => e.type === 'agent/inbox/spliced').map((e) => (e.type === 'agent/inbox/spliced' ? e.data : null));
    expect(splices.map((d) => [d!.target, d!.removedCount ?? 0, d!.inserted.length, d!.outcome ?? ''])).toEqual([
      ['next-turn', 0, 1, ''],
      ['next-step', 0, 1, ''],
      ['next-turn', 0, 1, ''],
      ['next-turn', 1, 0, 'canceled'],
      ['next-turn', 1, 0, ''],
      ['next-step', 1, 0, ''],
      ['next-step', 0, 1, ''],
      ['next-step', 1, 0, 'canceled'],
    ]);
    expect(discarded).toHaveLength(2);
    expect(inbox.size).toBe(0);
  });
});

describe('wake semantics', () => {
  it('a wake while idle opens a turn even if its message was cleared before the claim', async () => {
    const { agent, adapter } = harness([]);
    agent.prompt('gone');
    // Synchronously, before the driver claims: the inbox is emptied (without aborting).
    agent.inbox.clear();
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual(['turn/start 1', 'turn/end 1 completed']);
    expect(adapter.requests).toHaveLength(0);
  });

  it('a waking message sent while a turn aborts is re-targeted to the next turn and served after', async () => {
    const { agent, adapter } = harness(['hang', textResponse('after')]);
    agent.prompt('first');
    await new Promise((r) => setTimeout(r, 5));
    agent.cancel();
    agent.steer('steer during abort');
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('turn') || l.startsWith('user'))).toEqual([
      'turn/start 1',
      'user first',
      'turn/end 1 aborted:user',
      'turn/start 2',
      'user steer during abort',
      'turn/end 2 completed',
    ]);
    expect(adapter.requests).toHaveLength(2);
  });

  it('cancel while idle is a no-op and does not arm later work', async () => {
    const { agent } = harness([textResponse('x')]);
    agent.inject('ctx');
    agent.cancel();
    expect(agent.inbox.size).toBe(1);
    await agent.whenIdle();
    expect(agent.session.events.some((e) => e.type === 'turn/start')).toBe(false);
  });

  it('cancel with keepInbox keeps pending followups, which then run', async () => {
    const { agent } = harness(['hang', textResponse('second')]);
    agent.prompt('first');
    agent.followup('queued');
    await new Promise((r) => setTimeout(r, 5));
    agent.cancel({ kind: 'user' }, { keepInbox: true });
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('turn'))).toEqual([
      'turn/start 1',
      'turn/end 1 aborted:user',
      'turn/start 2',
      'turn/end 2 completed',
    ]);
  });

  it('cancel without keepInbox drops pending followups durably', async () => {
    const { agent } = harness(['hang']);
    agent.prompt('first');
    agent.followup('dropped');
    await new Promise((r) => setTimeout(r, 5));
    agent.cancel();
    await agent.whenIdle();
    expect(shape(agent.session.events, { inbox: true }).filter((l) => l.startsWith('splice'))).toEqual([
      'splice next-turn +1',
      'splice next-turn +1',
      'splice next-turn -1',
      'splice next-turn -1 canceled',
    ]);
    expect(agent.inbox.size).toBe(0);
  });

  it('a disposed agent refuses input', async () => {
    const { agent } = harness([]);
    await agent.dispose();
    expect(() => agent.prompt('x')).toThrow(/disposed/);
  });
});
