import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SessionEvent } from 'dsh';
import { main } from '../../examples/library/custom-tool.js';

function resultBlock(e: SessionEvent<'tool/result'>) {
  const block = e.data.message.content[0];
  if (block?.type !== 'tool-result') throw new Error(`tool/result at seq ${e.seq} holds no tool-result block`);
  return block;
}

describe('examples/library/custom-tool.ts', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function run() {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-example-test-'));
    dirs.push(dir);
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      return { dir, lines, result: await main(dir) };
    } finally {
      spy.mockRestore();
    }
  }

  it('runs the custom tool, denies the other call by policy, and ends the turn completed', async () => {
    const { result } = await run();
    expect(result.reads).toBe(1);
    expect(result.groceriesKept).toBe(true);
    expect(result.audited).toContain('read_note ok');
    const ends = result.session.events.filter((e) => e.type === 'turn/end');
    expect(ends.map((e) => e.data)).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('logs each tool/call and the tool/result that answers it, with the same callId', async () => {
    const { result } = await run();
    const events = result.session.events;
    const calls = events.filter((e) => e.type === 'tool/call');
    const results = events.filter((e) => e.type === 'tool/result');
    expect(calls.map((c) => [c.data.callId, c.data.name, c.data.arguments])).toEqual([
      ['call_read', 'read_note', '{"title":"groceries"}'],
      ['call_delete', 'delete_note', '{"title":"groceries"}'],
    ]);
    expect(results.map((r) => resultBlock(r).toolCallId)).toEqual(['call_read', 'call_delete']);
    for (const [i, r] of results.entries()) expect(r.sourceEventSeqs).toEqual([calls[i]!.seq]);

    const read = resultBlock(results[0]!);
    expect(read.isError).toBeFalsy();
    expect(read.content).toEqual([{ type: 'text', text: 'milk, eggs, coffee' }]);

    const denied = results[1]!;
    expect(resultBlock(denied).isError).toBe(true);
    expect(denied.data.error).toEqual({ name: 'PermissionDeniedError', code: 'DENIED' });
    expect(resultBlock(denied).content).toEqual([{ type: 'text', text: 'Error: delete_note was denied: notes are read-only in this app' }]);
  });

  it('prints the derived history, and the saved log reloads to the same history', async () => {
    const { dir, lines, result } = await run();
    expect(lines).toEqual([
      'user: What is on my grocery list? Delete the note afterwards.',
      'assistant: Reading the note, then deleting it. → read_note({"title":"groceries"}) → delete_note({"title":"groceries"})',
      'user: ← [call_read] milk, eggs, coffee',
      'user: ← [call_delete] error Error: delete_note was denied: notes are read-only in this app',
      'assistant: Your groceries note says: milk, eggs, coffee. I could not delete it: notes are read-only here.',
      `saved ${join(dir, 'session.jsonl')}: ${result.session.events.length} events; reloaded history matches`,
    ]);

    expect(result.file).toBe(join(dir, 'session.jsonl'));
    const text = readFileSync(result.file, 'utf8');
    expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ type: 'session', version: 0, id: result.session.id });
    expect(text).toContain('"type":"tool/call"');
    expect(text).toContain('"type":"tool/result"');

    const { reloaded } = result;
    expect(reloaded.warnings).toEqual([]);
    expect(reloaded.repaired).toEqual([]);
    expect(reloaded.eventCount).toBe(result.session.events.length);
    expect(reloaded.session.deriveMessages().toArray()).toEqual(result.session.deriveMessages().toArray());
    expect(reloaded.session.deriveMessages().toArray()).toHaveLength(5);
  });
});
