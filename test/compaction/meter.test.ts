/**
 * The token meter: the heuristic against counts worked out by hand from the documented rule
 * (4 ASCII characters a token, one token per other character, 4 tokens per message, 4 per tool
 * block, tool schemas as JSON text plus 4), and anchoring on reported usage.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/session/index.js';
import type { ToolResultMessage, UserMessage } from '../../src/model/message.js';
import { estimateText, estimateMessage, measure } from '../../src/compaction/index.js';
import { TestModel, bigTool, call, providerCount, say, testAgent } from './helpers.js';

const user = (text: string, id = 'u'): UserMessage => ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });

function stepSession(): Session {
  const s = Session.create();
  s.append('turn/start', { turn: 1 });
  s.append('step/start', { turn: 1, step: 1 });
  return s;
}

describe('the heuristic', () => {
  it('counts ASCII in fours, rounding up, and every other character as one token', () => {
    expect(estimateText('')).toBe(0);
    expect(estimateText('a'.repeat(400))).toBe(100);
    expect(estimateText('a'.repeat(401))).toBe(101);
    expect(estimateText('日本語')).toBe(3);
    expect(estimateText('ab日')).toBe(2); // ⌈2/4⌉ + 1
    expect(estimateText('😀')).toBe(1); // one character, two UTF-16 units
  });

  it('counts any string as the documented rule does, unit by unit (property: ASCII, BMP, astral, lone surrogates)', () => {
    // The rule unit by unit, as docs/compaction.md states it: ASCII in fours, every other UTF-16
    // unit one token except a low surrogate (the second half of a pair, or a stray one).
    const byRule = (text: string): number => {
      let ascii = 0;
      let other = 0;
      for (const unit of text.split('')) {
        const c = unit.charCodeAt(0);
        if (c < 0x80) ascii++;
        else if (c < 0xdc00 || c > 0xdfff) other++;
      }
      return Math.ceil(ascii / 4) + other;
    };
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0x7f }),
      fc.integer({ min: 0x80, max: 0xffff }),
      fc.integer({ min: 0xd800, max: 0xdfff }),
    );
    const text = fc.oneof(
      fc.string({ unit: 'grapheme-ascii' }),
      fc.string({ unit: 'binary' }),
      fc.array(unit).map((cs) => String.fromCharCode(...cs)),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(estimateText(t)).toBe(byRule(t));
      }),
      { numRuns: 500 },
    );
  });

  it('prices messages with their overhead, tool blocks included', () => {
    expect(estimateMessage(user('x'.repeat(40)))).toBe(4 + 10);
    const assistant = {
      id: 'a',
      role: 'assistant' as const,
      source: { kind: 'model' as const, provider: 'p', model: 'm' },
      content: [{ type: 'tool-call' as const, id: 'c1', name: 'read', arguments: '{"path":"abcdefgh"}' }],
    };
    // 4 (message) + 4 (tool block) + ⌈4/4⌉ (name) + ⌈19/4⌉ (arguments)
    expect(estimateMessage(assistant)).toBe(4 + 4 + 1 + 5);
    const result: ToolResultMessage = {
      id: 'r',
      role: 'user',
      source: { kind: 'tool', callId: 'c1' },
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'y'.repeat(80) }] }],
    };
    expect(estimateMessage(result)).toBe(4 + 4 + 20);
  });

  it('measures the surface plus the header plus what is about to enter', () => {
    const s = stepSession();
    s.append('user/message', user('a'.repeat(400)), { surfaceOp: 'append' });
    const tool = { name: 'read', description: 'Read a file.', parameters: { type: 'object', properties: {} } };
    s.append('request/header', {
      header: { config: { provider: 'p', model: 'm' }, system: 's'.repeat(40), tools: [tool] },
      reason: 'initial',
    });
    const m = measure(s, { pending: [user('b'.repeat(80))], contextWindow: 1000 });
    const schema = Math.ceil(JSON.stringify(tool).length / 4);
    expect(m.baseline).toBe('estimated');
    expect(m.headerTokens).toBe(4 + 10 + (4 + schema));
    expect(m.surfaceTokens).toBe(104);
    expect(m.pendingTokens).toBe(24);
    expect(m.tokens).toBe(4 + 10 + 4 + schema + 104 + 24);
    expect(m.pressure).toBe(m.tokens / 1000);
  });
});

describe('anchoring on reported usage', () => {
  function anchored(): { s: Session; assistantSeq: number } {
    const s = stepSession();
    s.append('user/message', user('a'.repeat(400)), { surfaceOp: 'append' });
    s.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' });
    const c1 = s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } }).seq;
    const c2 = s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } }).seq;
    const a = s.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: {
          id: 'a',
          role: 'assistant',
          content: [{ type: 'text', text: 'z'.repeat(40) }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
        usage: { inputTokens: 500, cacheReadTokens: 200, outputTokens: 9 },
      },
      { surfaceOp: 'append', sourceEventSeqs: [c1, c2] },
    );
    s.append('step/end', { turn: 1, step: 1 });
    s.append('step/start', { turn: 1, step: 2 });
    s.append('user/message', user('q'.repeat(40), 'u2'), { surfaceOp: 'append' });
    return { s, assistantSeq: a.seq };
  }

  it('uses the reported input (cache reads included) plus the estimate of what was appended since', () => {
    const { s, assistantSeq } = anchored();
    const m = measure(s);
    expect(m.baseline).toBe('usage');
    expect(m.anchorSeq).toBe(assistantSeq);
    // 700 reported; the answer (4 + 10) and the new prompt (4 + 10) were not in that request.
    expect(m.tokens).toBe(700 + 14 + 14);
  });

  it('drops the anchor once history is replaced', () => {
    const { s } = anchored();
    const first = s.surface.nodes[0]!;
    s.append('user/message', user('short', 'r'), { surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] });
    const m = measure(s);
    expect(m.baseline).toBe('estimated');
    expect(m.tokens).toBe(4 + 2 + 14 + 14);
  });

  it('drops the anchor when the system prompt or tools changed', () => {
    const { s } = anchored();
    s.append('request/header', { header: { config: { provider: 'p', model: 'm' }, system: 'new prompt' }, reason: 'change' });
    expect(measure(s).baseline).toBe('estimated');
  });

  it('tracks a provider count better than the heuristic alone over a real run', async () => {
    const model = new TestModel([
      call('c1', 'read', { path: 'a' }),
      call('c2', 'read', { path: 'b' }),
      call('c3', 'read', { path: 'c' }),
      say('done'),
    ]);
    const agent = testAgent(model, { compaction: false, agent: { tools: [bigTool(3000)] } });
    const taken: { anchored: number; estimated: number; baseline: string }[] = [];
    agent.on('agent/pre-step', async (p, next) => {
      const d = await next(p);
      const pending = d.kind === 'enter' ? d.messages : [];
      const m = measure(agent.session, { pending });
      taken.push({ anchored: m.tokens, estimated: m.headerTokens + m.surfaceTokens + m.pendingTokens, baseline: m.baseline });
      return d;
    });
    agent.prompt('Read a, b and c.');
    await agent.whenIdle();
    expect(taken.map((t) => t.baseline)).toEqual(['estimated', 'usage', 'usage', 'usage']);
    for (let i = 1; i < taken.length; i++) {
      const actual = providerCount(model.conversation[i]!);
      const t = taken[i]!;
      expect(Math.abs(t.anchored - actual)).toBeLessThan(Math.abs(t.estimated - actual));
      // The provider counts JSON text (ids, keys, escapes) that no message heuristic sees; the
      // anchor carries that difference for everything but the newest messages.
      expect(Math.abs(t.anchored - actual) / actual).toBeLessThan(0.15);
    }
  });
});
