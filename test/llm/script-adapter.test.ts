/**
 * The script adapter behind `--replay-model` / `--replay-override` (the one way a live surface is
 * fed recorded model streams): call N gets the recording's call N, an override replaces or patches
 * calls, entries fail or hang, a bad override is refused naming its JSON path, and the recorded
 * header's adapter defaults and context window are given back so the replayed run logs what the
 * recorded one did.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildScript, parseScriptOverride, ScriptAdapter, ScriptOverrideError } from '../../src/llm/script-adapter.js';
import { LlmError } from '../../src/model/failure.js';
import type { GenerateRequest } from '../../src/model/request.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { loadJsonl } from '../../src/session/codec/load.js';
import { describeShared, sharedPath } from '../support/shared.js';
import { LogBuilder, ROUTE, callChunks, drain, textChunks, user } from '../replay/helpers.js';

const request = (signal?: AbortSignal): GenerateRequest => ({ ...ROUTE, messages: [], ...(signal ? { signal } : {}) });

/** Turn 1: a tool call then a text reply; turn 2: a call cut off mid-stream (a recorded cancel). */
function recording(): { log: LogBuilder; cut: StreamChunk[] } {
  const log = new LogBuilder({ config: { ...ROUTE, maxTokens: 4096 }, adapterDefaults: { maxTokens: true } });
  log.startTurn(user('go')).startStep(user('go')).call('c1', 'ls', '{}', 'a.txt').endStep();
  log.startStep().reply('one file').endStep().endTurn();
  const cut: StreamChunk[] = [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text: 'wor' },
  ];
  log.startTurn(user('again')).startStep(user('again'));
  log.chunks(cut);
  log.endStep().endTurn({ kind: 'aborted', reason: { kind: 'user' } });
  return { log, cut };
}

describe('the derived script', () => {
  it('serves the recorded calls in order, whatever the live request says, then REPLAY_EXHAUSTED', async () => {
    const { log, cut } = recording();
    const a = new ScriptAdapter(log.events);
    expect(a.script.map((e) => e.kind)).toEqual(['chunks', 'chunks', 'hang']);
    expect(await drain(a.stream(request()))).toEqual(callChunks('c1', 'ls', '{}'));
    expect(await drain(a.stream(request()))).toEqual(textChunks('one file'));
    // The cut-off call: its recorded chunks, a wait until the request is cancelled, an aborted finish.
    const ctl = new AbortController();
    const got: StreamChunk[] = [];
    const done = (async () => {
      for await (const c of a.stream(request(ctl.signal))) got.push(c);
    })();
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toEqual(cut);
    ctl.abort();
    await done;
    expect(got.at(-1)).toMatchObject({ type: 'finish', reason: { kind: 'aborted' } });
    await expect(drain(a.stream(request()))).rejects.toMatchObject({ code: 'REPLAY_EXHAUSTED' });
    expect(a.served).toBe(4);
  });

  it("gives back the recorded adapter's defaults for a recorded call, and none for an override's entry", () => {
    const { log } = recording();
    const derived = new ScriptAdapter(log.events);
    expect(derived.resolveCall({ ...ROUTE })).toEqual({ config: { ...ROUTE, maxTokens: 4096 }, adapterDefaults: { maxTokens: true } });
    // A live call that sets the field itself keeps its own value.
    expect(derived.resolveCall({ ...ROUTE, maxTokens: 10 })).toEqual({ config: { ...ROUTE, maxTokens: 10 } });
    // Another model: nothing filled in.
    expect(derived.resolveCall({ provider: ROUTE.provider, model: 'other' })).toEqual({
      config: { provider: ROUTE.provider, model: 'other' },
    });
    const replaced = new ScriptAdapter(log.events, {
      override: { kind: 'replace', entries: [{ kind: 'chunks', chunks: textChunks('x') }] },
    });
    expect(replaced.resolveCall({ ...ROUTE })).toEqual({ config: { ...ROUTE } });
  });

  it("serves the recording's route (its providers), and the context window its route context names", () => {
    const log = new LogBuilder();
    log.startTurn(user('go')).startStep(user('go'));
    log.session.append('request/context', { ...ROUTE, contextWindow: 64_000 });
    log.reply('hi').endStep().endTurn();
    const a = new ScriptAdapter(log.events);
    expect(a.providers).toEqual([ROUTE.provider]);
    expect(a.modelInfo(ROUTE.model)).toEqual({ contextWindow: 64_000 });
    expect(a.modelInfo('other')).toBeUndefined();
  });
});

describe('overrides', () => {
  it('a bare array replaces the script; patches replace call N or append at the end', async () => {
    const { log } = recording();
    const replaced = new ScriptAdapter(log.events, {
      override: parseScriptOverride([{ kind: 'chunks', chunks: textChunks('only') }], 'o.json'),
    });
    expect(replaced.script).toHaveLength(1);
    expect(await drain(replaced.stream(request()))).toEqual(textChunks('only'));

    const patched = buildScript(
      log.events,
      parseScriptOverride(
        {
          patches: [
            { at: 1, entry: { kind: 'throw', chunks: [], message: 'rate limited', code: 'RATE_LIMITED' } },
            { at: 3, entry: { kind: 'chunks', chunks: textChunks('appended') } },
          ],
        },
        'o.json',
      ),
    );
    expect(patched.map((c) => c.entry.kind)).toEqual(['chunks', 'throw', 'hang', 'chunks']);
    // A patched call no longer carries the recorded call's place (its header is not the recording's).
    expect(patched.map((c) => c.seq !== undefined)).toEqual([true, false, true, false]);
    const a = new ScriptAdapter(log.events, { override: { kind: 'patch', patches: [{ at: 0, entry: patched[1]!.entry }] } });
    const err = await drain(a.stream(request())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', message: 'rate limited' });
  });

  it("a hang entry streams dsh's fixed prefix and creates its readyFile (relative to cwd) before waiting", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'dsh-script-'));
    const a = new ScriptAdapter([], { cwd, override: parseScriptOverride([{ kind: 'hang', readyFile: 'ready' }], 'o.json') });
    const ctl = new AbortController();
    const got: StreamChunk[] = [];
    const done = (async () => {
      for await (const c of a.stream(request(ctl.signal))) got.push(c);
    })();
    for (let i = 0; i < 100 && !existsSync(join(cwd, 'ready')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(readFileSync(join(cwd, 'ready'), 'utf8')).toBe('');
    expect(got).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'partial' },
    ]);
    ctl.abort();
    await done;
    expect(got.at(-1)).toMatchObject({ type: 'finish', reason: { kind: 'aborted' } });
  });

  const refusals: [string, unknown, string][] = [
    ['not an array or patches', { entries: [] }, '$'],
    ['an unknown entry kind', [{ kind: 'chunks', chunks: [] }, { kind: 'sleep' }], '$[1].kind'],
    ['an extra key', [{ kind: 'chunks', chunks: [], delay: 1 }], '$[0]'],
    ['a chunk a log would refuse', [{ kind: 'chunks', chunks: [{ type: 'text-delta', index: 0 }] }], '$[0].chunks[0]'],
    ['a throw without a code', [{ kind: 'throw', chunks: [], message: 'x', code: '' }], '$[0].code'],
    ['a negative patch index', { patches: [{ at: -1, entry: { kind: 'hang' } }] }, '$.patches[0].at'],
    [
      'a call patched twice',
      {
        patches: [
          { at: 0, entry: { kind: 'hang' } },
          { at: 0, entry: { kind: 'hang' } },
        ],
      },
      '$.patches[1].at',
    ],
    ['an empty readyFile', [{ kind: 'hang', readyFile: '' }], '$[0].readyFile'],
  ];
  for (const [what, doc, path] of refusals)
    it(`refuses ${what}, naming the file and ${path}`, () => {
      let err: unknown;
      try {
        parseScriptOverride(doc, 'o.json');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ScriptOverrideError);
      expect(err).toMatchObject({ code: 'OVERRIDE_INVALID', file: 'o.json', path });
    });

  it('refuses a patch past the end of the recording (equal appends), naming the file', () => {
    const { log } = recording();
    const o = parseScriptOverride({ patches: [{ at: 4, entry: { kind: 'hang' } }] }, 'o.json');
    expect(() => buildScript(log.events, o, 'o.json')).toThrow(/o\.json: \$\.patches: call 4 is past the 3 recorded call\(s\)/);
  });
});

describeShared('a real dsh recording', () => {
  it("serves a compaction summary dsh's own model wrote as a call, in its recorded place", () => {
    const file = sharedPath('fixtures', 'dsh-headless', 'compaction-recovery', 'session.jsonl');
    const events = loadJsonl(readFileSync(file, 'utf8'), { placeholders: 'warn' }).session.events;
    const summaries = events.filter((e) => e.type === 'compaction/summary' && e.data.llmStreamCall === true);
    expect(summaries.length).toBeGreaterThan(0);
    const calls = buildScript(events);
    const seqs = calls.map((c) => c.seq!);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    for (const s of summaries) {
      const call = calls.find((c) => c.seq === s.seq);
      expect(call?.entry.kind).toBe('chunks');
      const text = s.type === 'compaction/summary' ? s.data.rawOutput!.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : [];
      const served = call?.entry.kind === 'chunks' ? call.entry.chunks : [];
      expect(served.flatMap((c) => (c.type === 'block-end' && c.block.type === 'text' ? [c.block.text] : []))).toEqual(text);
      expect(served.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } });
    }
  });
});
