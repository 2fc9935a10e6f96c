/**
 * A recording's model calls as a script, served to a live surface in call order: call N of the
 * live run gets entry N. The one way a surface is fed recorded model streams instead of a
 * provider: `--replay-model LOG [--replay-override FILE]` on `dsh run`, `chat`, `sdk` and `acp`
 * (src/cli/agent/replay-model.ts), which the conformance runners and the surface tests use.
 *
 * Unlike `ReplayAdapter`, which places attempts by the live turn and step, a script does not ask
 * where the live run stands: a surface's turns start when its client says so, and dsh's snapshot
 * recordings are patched per call. The script is derived from a log (each attempt's
 * `assistant/chunk` stream in recorded order; an attempt recorded without a `finish` becomes a
 * hang) and may be patched by a `replay.override.json` sidecar in dsh's format: a bare array of
 * entries replaces the derived script, `{"patches": [{"at": N, "entry": …}]}` replaces call N
 * (N equal to the length appends). Entries:
 *
 * - `{"kind":"chunks","chunks":[…]}`: these chunks;
 * - `{"kind":"throw","chunks":[…],"message","code"}`: the chunks, then a provider failure;
 * - `{"kind":"hang","readyFile"?}`: dsh's fixed prefix (one text block reading `partial`), then a
 *   wait until the request is cancelled; `readyFile` (relative to `cwd`) is created once the prefix
 *   is out, so a driver knows when to cancel.
 *
 * Every chunk of an override is validated like a logged `assistant/chunk`; a bad file is a
 * `ScriptOverrideError` naming the file and the JSON path.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LlmAdapter, ModelInfo, ResolvedCall } from './adapter.js';
import { recordedDefaults, recordedModelInfo } from './recorded-call.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';
import { CodedError } from '../model/coded-error.js';
import { LlmError } from '../model/failure.js';
import type { SessionEvent } from '../session/events.js';
import { validateEventData } from '../session/validate.js';
import { indexRecording, type RecordedLog } from '../session/recording.js';

export type ScriptEntry =
  | { kind: 'chunks'; chunks: StreamChunk[] }
  | { kind: 'throw'; chunks: StreamChunk[]; message: string; code: string }
  | { kind: 'hang'; readyFile?: string; chunks?: StreamChunk[] };

export type ScriptOverride = { kind: 'replace'; entries: ScriptEntry[] } | { kind: 'patch'; patches: { at: number; entry: ScriptEntry }[] };

export class ScriptOverrideError extends CodedError<'OVERRIDE_INVALID'> {
  constructor(
    readonly file: string,
    readonly path: string,
    why: string,
  ) {
    super('OVERRIDE_INVALID', `${file}: ${path}: ${why}`);
    this.name = 'ScriptOverrideError';
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function exactKeys(v: Record<string, unknown>, keys: readonly string[]): boolean {
  const have = Object.keys(v);
  return have.length === keys.length && keys.every((k) => k in v);
}

function parseChunks(v: unknown, file: string, path: string): StreamChunk[] {
  if (!Array.isArray(v)) throw new ScriptOverrideError(file, path, 'expected an array of stream chunks');
  return v.map((c, i) => {
    try {
      validateEventData('assistant/chunk', 0, { turn: 1, step: 1, chunk: c });
    } catch (e) {
      throw new ScriptOverrideError(file, `${path}[${i}]`, (e as Error).message);
    }
    return c as StreamChunk;
  });
}

function parseEntry(v: unknown, file: string, path: string): ScriptEntry {
  if (!isRecord(v)) throw new ScriptOverrideError(file, path, 'expected an entry object');
  switch (v.kind) {
    case 'chunks':
      if (!exactKeys(v, ['kind', 'chunks'])) throw new ScriptOverrideError(file, path, 'a chunks entry has exactly kind and chunks');
      return { kind: 'chunks', chunks: parseChunks(v.chunks, file, `${path}.chunks`) };
    case 'throw':
      if (!exactKeys(v, ['kind', 'chunks', 'message', 'code']))
        throw new ScriptOverrideError(file, path, 'a throw entry has exactly kind, chunks, message and code');
      if (typeof v.message !== 'string') throw new ScriptOverrideError(file, `${path}.message`, 'expected a string');
      if (typeof v.code !== 'string' || v.code === '') throw new ScriptOverrideError(file, `${path}.code`, 'expected a non-empty string');
      return { kind: 'throw', chunks: parseChunks(v.chunks, file, `${path}.chunks`), message: v.message, code: v.code };
    case 'hang': {
      const keys = v.readyFile === undefined ? ['kind'] : ['kind', 'readyFile'];
      if (!exactKeys(v, keys)) throw new ScriptOverrideError(file, path, 'a hang entry has kind and an optional readyFile');
      if (v.readyFile !== undefined && (typeof v.readyFile !== 'string' || v.readyFile === ''))
        throw new ScriptOverrideError(file, `${path}.readyFile`, 'expected a non-empty string');
      return v.readyFile === undefined ? { kind: 'hang' } : { kind: 'hang', readyFile: v.readyFile as string };
    }
    default:
      throw new ScriptOverrideError(
        file,
        `${path}.kind`,
        `unknown entry kind ${JSON.stringify(v.kind) ?? 'undefined'} (chunks, throw or hang)`,
      );
  }
}

/** Read a `replay.override.json` document (already parsed); `file` names it in errors. */
export function parseScriptOverride(value: unknown, file: string): ScriptOverride {
  if (Array.isArray(value)) return { kind: 'replace', entries: value.map((e, i) => parseEntry(e, file, `$[${i}]`)) };
  if (!isRecord(value) || !exactKeys(value, ['patches']) || !Array.isArray(value.patches))
    throw new ScriptOverrideError(file, '$', 'expected an array of entries, or {"patches": [...]}');
  const seen = new Set<number>();
  const patches = value.patches.map((p: unknown, i: number) => {
    const path = `$.patches[${i}]`;
    if (!isRecord(p) || !exactKeys(p, ['at', 'entry'])) throw new ScriptOverrideError(file, path, 'a patch has exactly at and entry');
    if (typeof p.at !== 'number' || !Number.isSafeInteger(p.at) || p.at < 0)
      throw new ScriptOverrideError(file, `${path}.at`, 'expected a non-negative integer');
    if (seen.has(p.at)) throw new ScriptOverrideError(file, `${path}.at`, `call ${p.at} is patched twice`);
    seen.add(p.at);
    return { at: p.at, entry: parseEntry(p.entry, file, `${path}.entry`) };
  });
  return { kind: 'patch', patches };
}

/** One call of a script: what it serves, and where the recording has it (absent for an override's entry). */
export interface ScriptCall {
  entry: ScriptEntry;
  /** Seq of the recorded call's first event: its request header and context are the ones before it. */
  seq?: number;
}

/** The recording's calls in order (compaction summaries the model wrote included), patched by the override. */
export function buildScript(events: readonly SessionEvent[], override?: ScriptOverride, file = 'replay.override.json'): ScriptCall[] {
  const calls: ScriptCall[] = indexRecording(events).attempts.map((a) => ({
    seq: a.firstSeq,
    entry: a.finish ? { kind: 'chunks', chunks: a.chunks } : { kind: 'hang', chunks: a.chunks },
  }));
  // A summary the recording's own model wrote (`llmStreamCall: true`, complete `rawOutput`) was a
  // model call too: served as one block-start/block-end pair per block, its usage, a stop.
  for (const e of events) {
    if (e.type !== 'compaction/summary' || e.data.llmStreamCall !== true || !Array.isArray(e.data.rawOutput)) continue;
    const chunks: StreamChunk[] = [];
    e.data.rawOutput.forEach((block, index) => {
      if (block.type === 'text' || block.type === 'reasoning')
        chunks.push({ type: 'block-start', index, blockType: block.type }, { type: 'block-end', index, block });
    });
    if (e.data.usage) chunks.push({ type: 'usage', usage: e.data.usage });
    chunks.push({ type: 'finish', reason: { kind: 'stop' } });
    calls.push({ seq: e.seq, entry: { kind: 'chunks', chunks } });
  }
  const derived = calls.sort((a, b) => a.seq! - b.seq!);
  if (!override) return derived;
  if (override.kind === 'replace') return override.entries.map((entry) => ({ entry }));
  for (const p of override.patches) {
    if (p.at > derived.length)
      throw new ScriptOverrideError(file, '$.patches', `call ${p.at} is past the ${derived.length} recorded call(s) (equal appends)`);
    derived[p.at] = { entry: p.entry };
  }
  return derived;
}

export interface ScriptAdapterOptions {
  /** Routes served (default: the providers the recorded headers name). */
  providers?: readonly string[];
  /** Where a hang's `readyFile` is created (relative paths resolve here). */
  cwd?: string;
  override?: ScriptOverride;
  /** Names the override in errors (default `replay.override.json`). */
  overrideFile?: string;
}

/** Serves a recording's model calls in order (see the module comment). */
export class ScriptAdapter implements LlmAdapter {
  readonly providers: readonly string[];
  readonly script: readonly ScriptEntry[];
  private readonly calls: readonly ScriptCall[];
  private readonly recording: RecordedLog;
  private next = 0;

  constructor(
    events: readonly SessionEvent[],
    private readonly opts: ScriptAdapterOptions = {},
  ) {
    this.calls = buildScript(events, opts.override, opts.overrideFile);
    this.script = this.calls.map((c) => c.entry);
    this.recording = indexRecording(events);
    const recorded = this.recording.providers;
    this.providers = opts.providers ?? (recorded.length > 0 ? recorded : ['deepseek']);
  }

  /** The next call's recorded defaults (an override's entry has none), so the logged header matches the recording's. */
  resolveCall(config: LlmCallConfig): ResolvedCall {
    return recordedDefaults(this.recording, this.calls[this.next]?.seq, config);
  }

  /** The context window the recording's route context gave the model, if any. */
  modelInfo(model: string): ModelInfo | undefined {
    return recordedModelInfo(this.recording, model);
  }

  /** Calls served so far. */
  get served(): number {
    return this.next;
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk> {
    const call = this.next++;
    const e = this.script[call];
    if (!e)
      throw new LlmError({
        code: 'REPLAY_EXHAUSTED',
        message: `replay: call ${call + 1} was made, and the recording has ${this.script.length}`,
      });
    if (e.kind === 'chunks') {
      for (const c of e.chunks) yield structuredClone(c);
      return;
    }
    if (e.kind === 'throw') {
      for (const c of e.chunks) yield structuredClone(c);
      throw new LlmError({ code: e.code, message: e.message });
    }
    const prefix: StreamChunk[] = e.chunks ?? [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'partial' },
    ];
    for (const c of prefix) yield structuredClone(c);
    if (e.readyFile !== undefined) writeFileSync(resolve(this.opts.cwd ?? process.cwd(), e.readyFile), '');
    const signal = request.signal;
    if (signal && !signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    yield { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'replay: the recorded call was cancelled' } } };
  }
}
