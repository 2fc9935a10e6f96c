/**
 * `dsh log check` and `dsh log show` read a loaded log by records (issue 13 item 3): the summary
 * counts turns and steps with `eventsOfType`, the timeline counts compact chunk runs whole, and
 * `--turn` finds its range from the turn boundaries alone, so neither command builds an object
 * per chunk of a packed log. Each must answer exactly what the same code answers over the
 * materialised event list (the definition), on logs loaded from files, packed or one event per
 * line, with every chunk kind, tool calls, crash repair and turns of any shape.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readLog } from '../../src/cli/read-log.js';
import { summarize } from '../../src/cli/summary.js';
import { buildTimeline, lastEntrySeq, turnRange } from '../../src/cli/log/timeline.js';
import { renderEntries, showLog } from '../../src/cli/log/show.js';
import { Output } from '../../src/cli/output.js';
import { DEFAULT_WIDTHS, FULL_WIDTHS } from '../../src/cli/format.js';
import { encodeJsonl, type Session, type SessionEvent } from '../../src/session/index.js';
import { ChunkRun } from '../../src/session/chunk-runs.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { assistantMsg, newSession, toolResultMsg, userMsg } from '../session/helpers.js';

type Block = { kind: 'text' | 'reasoning' | 'tool-call'; deltas: number; framed: boolean };
type StepShape = { blocks: Block[]; usage: boolean; finish: boolean; tool: boolean };
type TurnShape = { steps: StepShape[] };

const blockArb: fc.Arbitrary<Block> = fc.record({
  kind: fc.constantFrom('text', 'reasoning', 'tool-call'),
  deltas: fc.integer({ min: 0, max: 7 }),
  framed: fc.boolean(),
});
const stepArb: fc.Arbitrary<StepShape> = fc.record({
  blocks: fc.array(blockArb, { maxLength: 3 }),
  usage: fc.boolean(),
  finish: fc.boolean(),
  tool: fc.boolean(),
});
const logArb = fc.record({
  turns: fc.array(fc.record({ steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }) }), { maxLength: 4 }),
  // The last turn left open: the loader closes it (crash repair), show marks what it added.
  open: fc.boolean(),
  pack: fc.boolean(),
});

/** A session with the given shape, every event as an agent writes it. */
function build(turns: TurnShape[], open: boolean): Session {
  const s = newSession();
  turns.forEach((t, ti) => {
    const turn = ti + 1;
    s.append('turn/start', { turn });
    s.append('user/message', userMsg(`u${turn}`, `question\n  number ${turn}`), { surfaceOp: 'append' });
    t.steps.forEach((st, si) => {
      const step = si + 1;
      s.append('step/start', { turn, step });
      const seqs: number[] = [];
      const chunk = (c: StreamChunk): void => void seqs.push(s.append('assistant/chunk', { turn, step, chunk: c }).seq);
      st.blocks.forEach((b, index) => {
        if (b.framed) chunk({ type: 'block-start', index, blockType: b.kind });
        for (let d = 0; d < b.deltas; d++) {
          if (b.kind === 'tool-call')
            chunk({
              type: 'tool-call-delta',
              index,
              id: `c${turn}.${step}`,
              ...(d === 0 ? { name: 'bash' } : {}),
              argumentsDelta: `{${d}`,
            });
          else chunk({ type: b.kind === 'text' ? 'text-delta' : 'reasoning-delta', index, text: `w${d} ` });
        }
        if (b.framed) chunk({ type: 'block-end', index, block: { type: 'text', text: 'x' } });
      });
      if (st.usage) chunk({ type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } });
      if (st.finish) chunk({ type: 'finish', reason: { kind: st.tool ? 'tool-calls' : 'stop' } });
      const content = st.tool
        ? [
            { type: 'text' as const, text: 'calling' },
            { type: 'tool-call' as const, id: `call${turn}.${step}`, name: 'bash', arguments: '{"command":"ls"}' },
          ]
        : [{ type: 'text' as const, text: `answer ${turn}.${step}` }];
      s.append(
        'assistant/message',
        { turn, step, message: assistantMsg(`a${turn}.${step}`, content), usage: { inputTokens: 3, outputTokens: 2 } },
        { surfaceOp: 'append', sourceEventSeqs: seqs },
      );
      if (st.tool) {
        const callId = `call${turn}.${step}`;
        const call = s.append('tool/call', { turn, step, callId, name: 'bash', arguments: '{"command":"ls"}' }).seq;
        s.append(
          'tool/result',
          { turn, step, message: toolResultMsg(`r${turn}.${step}`, callId) },
          { surfaceOp: 'append', sourceEventSeqs: [call] },
        );
      }
      if (!(open && ti === turns.length - 1 && si === t.steps.length - 1)) s.append('step/end', { turn, step });
    });
    if (!(open && ti === turns.length - 1)) s.append('turn/end', { turn, reason: { kind: 'completed' } });
  });
  return s;
}

const dir = mkdtempSync(join(tmpdir(), 'dsh-log-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

let n = 0;
function written(s: Session, pack: boolean): string {
  const path = join(dir, `log-${n++}.jsonl`);
  writeFileSync(path, encodeJsonl({ ...s.header, type: undefined } as never, s.events, { pack }));
  return path;
}

/** The old definition of `turnRange`: over every event, the log's last seq closing an open turn. */
function turnRangeOverEvents(events: readonly SessionEvent[], turn: number): { start: number; end: number } | undefined {
  let start: number | undefined;
  for (const e of events) {
    if (e.type === 'turn/start' && e.data.turn === turn) start = e.seq;
    else if (e.type === 'turn/end' && e.data.turn === turn && start !== undefined) return { start, end: e.seq };
  }
  return start === undefined ? undefined : { start, end: events.length - 1 };
}

describe('log check and show read loaded logs by records', () => {
  it('the timeline, summary and turn ranges equal the same code over the materialised events', async () => {
    let runsSeen = 0;
    await fc.assert(
      fc.asyncProperty(logArb, fc.boolean(), async ({ turns, open, pack }, full) => {
        const log = await readLog(written(build(turns, open), pack));
        const session = log.session;
        const runs = [...session.records()].filter((r) => r instanceof ChunkRun).length;
        runsSeen += runs;
        const opts = { widths: full ? FULL_WIDTHS : DEFAULT_WIDTHS, fileEventCount: log.eventCount };
        const member = vi.spyOn(ChunkRun.prototype, 'member');
        const byRecords = buildTimeline(session.records(), opts);
        const summary = summarize(log);
        const ranges = turns.map((_, i) => turnRange(session.eventsOfType(['turn/start', 'turn/end']), i + 1, session.length - 1));
        const missing = turnRange(session.eventsOfType(['turn/start', 'turn/end']), turns.length + 1, session.length - 1);
        expect(member).not.toHaveBeenCalled();
        member.mockRestore();

        const events = session.events;
        expect(byRecords).toEqual(buildTimeline(events, opts));
        expect(summary.turns).toBe(events.filter((e) => e.type === 'turn/start').length);
        expect(summary.steps).toBe(events.filter((e) => e.type === 'step/start').length);
        expect(summary.events).toBe(log.eventCount);
        expect(ranges).toEqual(turns.map((_, i) => turnRangeOverEvents(events, i + 1)));
        expect(missing).toBeUndefined();
      }),
      { numRuns: 150 },
    );
    // Else nothing above was read through a compact run.
    expect(runsSeen).toBeGreaterThan(50);
  });

  it('show writes each entry as it is made: the lines of the whole timeline, filtered and rendered', async () => {
    /** The definition: every entry of the materialised events, those of `range`, rendered at once. */
    const reference = (
      events: readonly SessionEvent[],
      opts: Parameters<typeof buildTimeline>[1],
      range?: { start: number; end: number },
    ) => {
      let text = '';
      const o = new Output({ write: (s: string) => void (text += s) }, false);
      const all = buildTimeline(events, opts);
      renderEntries(range ? all.filter((e) => e.seq >= range.start && e.seq <= range.end) : all, o);
      o.flush();
      return text;
    };
    await fc.assert(
      fc.asyncProperty(logArb, fc.boolean(), async ({ turns, open, pack }, full) => {
        const log = await readLog(written(build(turns, open), pack));
        const events = log.session.events;
        const opts = { widths: full ? FULL_WIDTHS : DEFAULT_WIDTHS, fileEventCount: log.eventCount };
        const entries = buildTimeline(events, opts);
        expect(lastEntrySeq(log.session.recordsBack(), opts)).toBe(entries.at(-1)?.seq);
        // Read from the log's end through any seq: the last entry at or before it.
        for (let end = -1; end <= log.session.length; end++)
          expect(lastEntrySeq(log.session.recordsBack(end), opts), `through ${end}`).toBe(entries.filter((e) => e.seq <= end).at(-1)?.seq);
        for (const turn of [undefined, ...turns.map((_, i) => i + 1)]) {
          let text = '';
          const o = new Output({ write: (s: string) => void (text += s) }, false);
          showLog(log, { ...(turn !== undefined ? { turn } : {}), ...(full ? { full } : {}) }, { out: o, err: o, env: {} });
          o.flush();
          const range = turn === undefined ? undefined : turnRangeOverEvents(events, turn);
          // After the header lines and the blank line.
          expect(text.slice(text.indexOf('\n\n') + 2)).toBe(reference(events, opts, range));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('show writes every line of a timeline many batches long, to a text sink and to a byte sink alike', async () => {
    // The writer joins lines into ~16K-character batches: each line must still come out once, in
    // order, the last batch too. The expected lines are made here from the entries.
    const turns = Array.from({ length: 150 }, () => ({
      steps: [{ blocks: [{ kind: 'text' as const, deltas: 5, framed: true }], usage: true, finish: true, tool: true }],
    }));
    const log = await readLog(written(build(turns, false), true));
    const opts = { widths: DEFAULT_WIDTHS, fileEventCount: log.eventCount };
    const entries = buildTimeline(log.session.events, opts);
    const width = String(entries.at(-1)!.seq).length;
    const want: string[] = [];
    for (const e of entries) {
      const indent = '  '.repeat(e.depth);
      want.push(`${String(e.seq).padStart(width)}  ${indent}${e.head}`);
      for (const d of e.details ?? []) want.push(`${' '.repeat(width)}  ${indent}    ${d}`);
    }
    let text = '';
    const chunks: Buffer[] = [];
    const o = new Output({ write: (x: string) => void (text += x) }, false);
    const b = new Output({ write: (x: string | Uint8Array) => void chunks.push(Buffer.from(x)) }, false, true);
    for (const out of [o, b]) {
      showLog(log, {}, { out, err: out, env: {} });
      out.flush();
    }
    const bytes = Buffer.concat(chunks).toString('utf8');
    expect(bytes).toBe(text);
    expect(text.length).toBeGreaterThan(3 * 16384);
    expect(text.slice(text.indexOf('\n\n') + 2)).toBe(`${want.join('\n')}\n`);
  });

  it('the seq column is as wide as the last entry shown, not the last event', async () => {
    // A turn left open in a stream: crash repair adds step/end 8, turn/end 9 and a session/end-seed
    // at 10 that the timeline does not show. So the column is one digit although the log's last
    // seq has two.
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    s.append('step/start', { turn: 1, step: 1 });
    for (let i = 0; i < 6; i++) s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } });
    const log = await readLog(written(s, true));
    expect(log.session.length).toBeGreaterThan(10);
    for (const turn of [undefined, 1]) {
      let text = '';
      const o = new Output({ write: (x: string) => void (text += x) }, false);
      showLog(log, turn === undefined ? {} : { turn }, { out: o, err: o, env: {} });
      o.flush();
      const lines = text
        .slice(text.indexOf('\n\n') + 2)
        .trimEnd()
        .split('\n');
      expect(lines[0]).toBe('0  turn 1');
      expect(lines.at(-1)).toMatch(/^9 {2}turn 1 end: /);
    }
  });

  it('a stream of runs and separate chunks is one timeline line, counted by kind', async () => {
    const s = build(
      [
        {
          steps: [
            {
              blocks: [
                { kind: 'reasoning', deltas: 4, framed: true },
                { kind: 'text', deltas: 5, framed: false },
              ],
              usage: true,
              finish: true,
              tool: false,
            },
          ],
        },
      ],
      false,
    );
    const log = await readLog(written(s, true));
    expect([...log.session.records()].filter((r) => r instanceof ChunkRun)).toHaveLength(2);
    const stream = buildTimeline(log.session.records(), { widths: DEFAULT_WIDTHS, fileEventCount: log.eventCount }).filter((e) =>
      e.head.startsWith('stream:'),
    );
    // turn/start 0, user/message 1, step/start 2; then 1 block-start + 4 reasoning + block-end +
    // 5 text + usage + finish = 13 chunks, seqs 3–15.
    expect(stream).toEqual([
      {
        seq: 3,
        lastSeq: 15,
        depth: 2,
        tone: 'dim',
        head: 'stream: reasoning ×4 deltas, text ×5 deltas · 1 block · usage · finish stop  [13 chunks, #3–15]',
      },
    ]);
  });
});
