/**
 * dsh's newer session formats (1–4) read as format 0 in memory (issue 11 item 4): every real
 * V2–V4 log of ../shared/fixtures/dsh-next loads through both loaders, derives, converts to a
 * format 0 log that loads to the same events, and keeps every row (nothing dropped).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, loadJsonlFile, SessionError } from '../../src/session/index.js';
import { nextLogs, sharedNextDir } from '../support/next-logs.js';
import { describeShared } from '../support/shared.js';

const logs = nextLogs();

describeShared('dsh formats 2–4 (real logs)', () => {
  it.each([...logs.keys()])('%s', (f) => {
    const path = logs.get(f)!;
    const text = readFileSync(path, 'utf8');
    const rows = text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { type: string; data: { stream?: { type: string; texts?: unknown[]; args?: unknown[] }[] } });
    const clock = (): number => 0;
    const a = loadJsonl(text, { file: path, placeholders: 'warn', clock });
    const b = loadJsonlFile(path, { placeholders: 'warn', clock });
    expect(b.session.events).toEqual(a.session.events);
    expect(a.warnings[0]!.code).toBe('FORMAT_CONVERTED');
    // Every row is an event, and every stream member a chunk event.
    let members = 0;
    for (const r of rows) for (const s of r.data.stream ?? []) members += s.type === 'chunk' ? 1 : (s.texts ?? s.args ?? []).length;
    const attempts = rows.filter((r) => r.type === 'assistant/attempt').length;
    expect(a.eventCount).toBe(rows.length - attempts + members);
    expect(a.session.events.filter((e) => e.type === 'assistant/chunk')).toHaveLength(members);
    // The model-visible history as the source states it: its surface events (system prompt
    // aside, which format 0 keeps in the request header), appended or replacing a seq range,
    // seq being the row index. Derived from the converted log, it must be the same messages.
    const expected: { seq: number; id: unknown; role: unknown; callId?: unknown }[] = [];
    rows.forEach((r, seq) => {
      const row = r as unknown as { type: string; seq?: number; data: Record<string, unknown>; surfaceOp?: unknown };
      if (!['user/message', 'assistant/message', 'tool/result'].includes(row.type)) return;
      const m = (row.type === 'user/message' ? row.data : row.data.message) as {
        id: unknown;
        role: unknown;
        toolCallId?: unknown;
        content: { toolCallId?: unknown }[];
      };
      const entry = {
        seq: row.seq ?? seq,
        id: m.id,
        role: m.role === 'tool' ? 'user' : m.role,
        ...(row.type === 'tool/result' ? { callId: m.toolCallId ?? m.content[0]!.toolCallId } : {}),
      };
      const op = row.surfaceOp as { op?: string; startSeq?: number; endSeq?: number; start?: number; end?: number } | undefined;
      if (op && typeof op === 'object' && op.op === 'replace') {
        const lo = op.startSeq ?? op.start!;
        const hi = op.endSeq ?? op.end!;
        const at = expected.findIndex((x) => x.seq >= lo);
        const kept = expected.filter((x) => x.seq < lo || x.seq > hi);
        kept.splice(at < 0 ? kept.length : at, 0, entry);
        expected.splice(0, expected.length, ...kept);
      } else expected.push(entry);
    });
    const derived = a.session
      .deriveMessages()
      .toArray()
      .map((m) => ({
        id: m.id,
        role: m.role,
        ...(m.content[0]?.type === 'tool-result' && (m.source as { kind: string }).kind === 'tool'
          ? { callId: m.content[0].toolCallId }
          : {}),
      }));
    // A snapshot placeholder id shared by different messages is given a #n suffix (see below).
    const placeholder = /^\{\{[^{}]*\}\}$/;
    expect(derived).toEqual(
      expected.map(({ seq: _s, ...x }) =>
        typeof x.id === 'string' && placeholder.test(x.id)
          ? { ...x, id: expect.stringMatching(new RegExp(`^${x.id.replace(/[{}]/g, '\\$&')}(#\\d+)?$`)) }
          : x,
      ),
    );
    const again = loadJsonl(encodeJsonl(a.session.header, a.session.events.slice(0, a.eventCount)), { placeholders: 'warn' });
    expect(again.session.events.slice(0, a.eventCount)).toEqual(a.session.events.slice(0, a.eventCount));
  });
});

describe('format 4 read as format 0: renumbering and shapes', () => {
  const rows = [
    { type: 'session', version: 4, id: 's4', createdAt: 100, cwd: '/w', isSeeded: false, delegationDepth: 0 },
    { type: 'turn/start', data: { turn: 1 } },
    { type: 'step/start', data: { turn: 1, step: 1 } },
    {
      type: 'user/message',
      data: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      surfaceOp: 'append',
    },
    {
      type: 'assistant/message',
      data: {
        turn: 1,
        step: 1,
        message: {
          id: 'a1',
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
        stream: [
          { type: 'chunk', time: 110, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } },
          { type: 'tool-call-chunks', time0: 111, index: 0, dt: [2], id: 'c1', name: 'read', args: ['{', '}'] },
          {
            type: 'chunk',
            time: 114,
            chunk: { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' } },
          },
          { type: 'chunk', time: 115, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } },
        ],
      },
      surfaceOp: 'append',
    },
    { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{}' } },
    {
      type: 'tool/result',
      data: {
        turn: 1,
        step: 1,
        message: {
          id: 't1',
          role: 'tool',
          toolCallId: 'c1',
          content: [{ type: 'text', text: 'x' }],
          isError: false,
          source: { kind: 'tool', callId: 'c1' },
        },
      },
      surfaceOp: 'append',
      sourceEventSeqs: [4],
    },
    { type: 'step/end', data: { turn: 1, step: 1 } },
    { type: 'step/start', data: { turn: 1, step: 2 } },
    {
      type: 'user/message',
      data: { id: 'u2', role: 'user', content: [{ type: 'text', text: 'summary' }], source: { kind: 'compact-checkpoint' } },
      surfaceOp: { op: 'replace', startSeq: 2, endSeq: 5 },
      sourceEventSeqs: [2, 3, 5],
    },
    { type: 'room/message', data: { room: 'r', text: 'later dsh' } },
    { type: 'step/end', data: { turn: 1, step: 2 } },
    { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ];
  const text = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

  it('streams become chunk events before their message, and every seq reference follows the renumbering', () => {
    const l = loadJsonl(text, { file: 'v4.jsonl', clock: () => 0 });
    const ev = l.session.events.slice(0, l.eventCount) as unknown as {
      type: string;
      seq: number;
      time: number;
      data: Record<string, unknown>;
      surfaceOp?: unknown;
      sourceEventSeqs?: number[];
      ignorable?: true;
    }[];
    // 3 events, then the 5 stream members (block-start, two deltas, block-end, finish), then the message.
    expect(ev.slice(3, 8).map((e) => [e.type, e.time, (e.data.chunk as { type: string }).type])).toEqual([
      ['assistant/chunk', 110, 'block-start'],
      ['assistant/chunk', 111, 'tool-call-delta'],
      ['assistant/chunk', 113, 'tool-call-delta'],
      ['assistant/chunk', 114, 'block-end'],
      ['assistant/chunk', 115, 'finish'],
    ]);
    expect(ev[8]).toMatchObject({ type: 'assistant/message', seq: 8, sourceEventSeqs: [3, 4, 5, 6, 7] });
    expect(ev[8]!.data).not.toHaveProperty('stream');
    // The V4 tool result, wrapped back into one tool-result block; its citation of the message (old seq 3... here 4: the tool/call) mapped.
    expect(ev[10]).toMatchObject({ type: 'tool/result', seq: 10, sourceEventSeqs: [9] });
    expect(ev[10]!.data.message).toEqual({
      id: 't1',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'x' }], isError: false }],
      source: { kind: 'tool', callId: 'c1' },
    });
    // The checkpoint replaces old seqs 2..5 = new 2..10, and its source is format 0's plugin wrapper.
    expect(ev[13]).toMatchObject({
      type: 'user/message',
      surfaceOp: { op: 'replace', start: 2, end: 10 },
      sourceEventSeqs: [2, 8, 10],
      data: { source: { kind: 'plugin', plugin: 'compact' } },
    });
    expect(ev[14]).toMatchObject({ type: 'room/message', ignorable: true });
    expect(
      l.session
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['u2']);
    expect(l.lineOf(8)).toBe(5);
    expect(l.warnings.map((w) => w.code)).toContain('FORMAT_CONVERTED');
  });

  it('an error in a converted log names the source line', () => {
    const bad = text.replace('"tool/call","data":{"turn":1', '"tool/call","data":{"turn":"one"');
    let err: unknown;
    try {
      loadJsonl(bad, { file: 'v4.jsonl' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SessionError);
    expect((err as SessionError).details.line).toBe(6);
    expect((err as SessionError).message).toMatch(/^v4\.jsonl:line 6: .*\(format 4, read as format 0\)$/);
  });

  it('a forked log (isSeeded: true) takes its cut from the last session/end-seed {inherited: true}', () => {
    // The marker after the first step (old seq 7) follows 3 + 5 stream members + 4 events: the
    // inherited prefix is 12 events in format 0's numbering.
    const forked = text
      .replace('"isSeeded":false', '"isSeeded":true')
      .replace(
        '{"type":"step/start","data":{"turn":1,"step":2}}',
        '{"type":"session/end-seed","data":{"inherited":true}}\n{"type":"step/start","data":{"turn":1,"step":2}}',
      );
    const l = loadJsonl(forked, { clock: () => 0 });
    expect(l.session.header.seedLength).toBe(12);
    const marker = l.session.events[12]!;
    expect(marker).toMatchObject({ type: 'session/end-seed', data: { inherited: true } });
    expect(l.warnings.map((w) => w.message).join('\n')).toMatch(
      /inherited cut at the session\/end-seed of line 9 is read as seedLength 12/,
    );
  });

  it('a forked log with no inherited end-seed marker is refused with a typed error at line 1', () => {
    let err: unknown;
    try {
      loadJsonl(text.replace('"isSeeded":false', '"isSeeded":true'), { file: 'f.jsonl' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SessionError);
    expect((err as SessionError).code).toBe('FORMAT_UNSUPPORTED');
    expect((err as SessionError).details.line).toBe(1);
    expect((err as SessionError).message).toMatch(/isSeeded: true\) with no session\/end-seed \{inherited: true\}/);
  });
});

// Fetched from dsh's repository (snapshots/session/memory-review-fork/session.1.v4.jsonl): data
// from another project lives only in ../shared, so this skips where that file is absent; the
// synthetic V4 fork above holds the same rule everywhere.
const forkLog = join(sharedNextDir, 'snapshots__session__memory-review-fork__session.1.v4.jsonl');
if (!existsSync(forkLog) && !process.env.DSH_QUIET_SKIPS) {
  console.warn(`[dsh tests] skipping the real forked V4 log: ${forkLog} is absent on this machine`);
}

describe.skipIf(!existsSync(forkLog))('a real forked V4 log (memory-review fork)', () => {
  it('reads the inherited prefix as seedLength: the rows before the end-seed plus their stream members', () => {
    const path = forkLog;
    const text = readFileSync(path, 'utf8');
    const rows = text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            data: { inherited?: boolean; stream?: { type: string; texts?: unknown[]; args?: unknown[] }[] };
          },
      );
    const at = rows.findIndex((r) => r.type === 'session/end-seed' && r.data.inherited === true);
    expect(at).toBeGreaterThan(0);
    let inherited = 0;
    for (const r of rows.slice(0, at)) {
      inherited++;
      for (const m of r.data.stream ?? []) inherited += m.type === 'chunk' ? 1 : (m.texts ?? m.args ?? []).length;
    }
    const l = loadJsonlFile(path, { placeholders: 'warn', clock: () => 0 });
    expect(l.session.header).toMatchObject({ parentSession: '{{session:1}}', seedLength: inherited });
    expect(l.session.events[inherited]!.type).toBe('session/end-seed');
    // The child sees the inherited conversation: its history holds the parent's prompt too.
    expect(
      l.session
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toContain('{{message:1}}');
  });
});

describe('snapshot placeholder ids shared by different messages', () => {
  // dsh's python-sdk snapshots write every message id as {{messageId}}; two different messages
  // pending in the inbox at once under one id stop replay (DUPLICATE_MESSAGE_ID). Each distinct
  // message gets its own id; an inbox entry and the user/message it became keep one id.
  const msg = (text: string, id: string, kind = 'user') => ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind } });
  const rows = [
    { type: 'session', version: 4, id: 's', createdAt: 0, isSeeded: false, delegationDepth: 0 },
    { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, inserted: [msg('context', '{{messageId}}', 'plugin:x')] } },
    // Same message, other key order: the user/message below must get the same id as this entry.
    {
      type: 'agent/inbox/spliced',
      data: {
        target: 'next-turn',
        start: 0,
        inserted: [{ source: { kind: 'user' }, content: [{ type: 'text', text: 'go' }], role: 'user', id: '{{messageId}}' }],
      },
    },
    { type: 'turn/start', data: { turn: 1 } },
    { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, removedCount: 1, inserted: [] } },
    { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } },
    { type: 'step/start', data: { turn: 1, step: 1 } },
    { type: 'user/message', data: msg('context', '{{messageId}}', 'plugin:x'), surfaceOp: 'append' },
    { type: 'user/message', data: msg('go', '{{messageId}}'), surfaceOp: 'append' },
    // Real ids are never rewritten, even when repeated.
    { type: 'user/message', data: msg('a', 'real'), surfaceOp: 'append' },
    { type: 'user/message', data: msg('b', 'real'), surfaceOp: 'append' },
    { type: 'step/end', data: { turn: 1, step: 1 } },
    { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ];
  const text = `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

  it('each distinct message under one placeholder gets its own id; the same message keeps one', () => {
    const l = loadJsonl(text, { placeholders: 'warn', clock: () => 0 });
    const ev = l.session.events as unknown as { type: string; data: { inserted?: { id: string }[]; id?: string } }[];
    const inserted = ev.filter((e) => e.type === 'agent/inbox/spliced').flatMap((e) => (e.data.inserted ?? []).map((m) => m.id));
    expect(inserted).toEqual(['{{messageId}}', '{{messageId}}#2']);
    expect(
      l.session
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['{{messageId}}', '{{messageId}}#2', 'real', 'real']);
    expect(l.warnings.map((w) => w.message).join('\n')).toMatch(/2 message\(s\) shared a snapshot placeholder id/);
  });

  it('compares messages of any depth without overflowing the stack (found by the fuzzer)', () => {
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    const hostile = text.replace('"text":"context"}]', `"text":"context","extra":${deep}}]`);
    let err: unknown;
    try {
      loadJsonl(hostile, { placeholders: 'warn', clock: () => 0 });
    } catch (e) {
      err = e;
    }
    // Whatever the verdict on such a message, it is a typed one.
    if (err !== undefined) expect(err).toBeInstanceOf(SessionError);
  });
});
