/**
 * The replay adapter: re-serves the model streams recorded in a session log, so a recorded
 * session re-runs with no model at all.
 *
 * Attempts are grouped by turn and step (`indexRecording`): a step with retries has several, a
 * failed one ending with its error `finish`. An attempt recorded without a `finish` (the turn was
 * cancelled mid-stream) is served as its chunks and then waits until the request's signal aborts.
 *
 * Every live request is checked against the recorded one, which the log itself reconstructs
 * ("model-visible means recorded"): for the attempt whose first chunk is at seq S, the recorded
 * messages are `deriveMessagesFrom(events, S - 1)` and the header in force is the latest
 * `request/header` before S. Messages (ids ignored: they are minted per run), provider, model,
 * system and tools are compared; each divergence is kept with its attempt and the first differing
 * JSON path. `strict` mode refuses a diverging request (`REPLAY_DIVERGED`); `report` mode (the
 * default) serves it anyway. Recorded `{{placeholders}}` match anything and are reported as such.
 *
 * Attempts are served in recorded order, or, when the caller says where the live request stands
 * (`position`), by turn, step and attempt number, so one divergent step does not shift the rest.
 *
 * The log reading it shares with the replay harness (`src/session/recording.ts`,
 * `json-diff.ts`) is pure and imports nothing above the session layer, so this adapter stays
 * below the agent.
 */
import type { LlmAdapter, ModelInfo, ResolvedCall } from './adapter.js';
import { messageArray } from '../model/history.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import { recordedDefaults, recordedModelInfo } from './recorded-call.js';
import type { StreamChunk } from '../model/stream.js';
import type { Message } from '../model/message.js';
import { LlmError } from '../model/failure.js';
import type { EpochHeader, SessionEvent } from '../session/events.js';
import { deriveMessagesFrom } from '../session/derive.js';
import { loadJsonl } from '../session/codec/load.js';
import { indexRecording, type RecordedAttempt, type RecordedLog } from '../session/recording.js';
import { firstDifference, preview, withoutIds, type PlaceholderHit } from '../session/json-diff.js';

export type ReplayMode = 'strict' | 'report';

export type ReplayErrorCode = 'REPLAY_DIVERGED' | 'REPLAY_EXHAUSTED';

/** An `LlmError`, so the loop records the code verbatim on the turn and no retry policy retries it. */
export class ReplayError extends LlmError {
  constructor(code: ReplayErrorCode, message: string) {
    super({ code, message });
    this.name = 'ReplayError';
  }
}

export type RequestField = 'messages' | 'provider' | 'model' | 'system' | 'tools';

export interface AttemptRef {
  turn: number;
  step: number;
  attempt: number;
}

export interface RequestDivergence extends AttemptRef {
  field: RequestField | 'attempt';
  /** First differing JSON path, rooted at the field (`messages[2].content[0].text`). */
  path: string;
  recorded: unknown;
  live: unknown;
  message: string;
}

export interface PlaceholderMatch extends AttemptRef {
  field: RequestField;
  path: string;
  token: string;
}

export interface ReplayPosition {
  turn: number;
  step: number;
}

export interface ReplayAdapterOptions {
  /** `report` (default) serves a diverging request and records it; `strict` refuses it. */
  mode?: ReplayMode;
  /** Provider routes to serve; by default the ones the recorded headers name. */
  providers?: readonly string[];
  /** Where the live request stands, in the recording's numbering; absent: serve in recorded order. */
  position?: () => ReplayPosition | undefined;
  /** Called when a served attempt reaches its recorded end without a finish (a recorded cancel point). */
  onHang?: (attempt: RecordedAttempt) => void;
}

export type ReplaySource = string | readonly SessionEvent[] | { readonly events: readonly SessionEvent[] } | RecordedLog;

function isRecordedLog(s: ReplaySource): s is RecordedLog {
  return typeof s === 'object' && !Array.isArray(s) && 'attempts' in s && 'turns' in s;
}

/** The recorded events of a source; JSONL text is loaded leniently (tokenised fixtures). */
export function recordedEvents(source: Exclude<ReplaySource, RecordedLog>): readonly SessionEvent[] {
  if (typeof source === 'string') return loadJsonl(source, { placeholders: 'warn' }).session.events;
  return Array.isArray(source) ? source : (source as { readonly events: readonly SessionEvent[] }).events;
}

export class ReplayAdapter implements LlmAdapter {
  readonly providers: readonly string[];
  readonly recording: RecordedLog;
  readonly divergences: RequestDivergence[] = [];
  readonly placeholders: PlaceholderMatch[] = [];
  /** Attempts served so far, in order. */
  readonly served: RecordedAttempt[] = [];
  private readonly mode: ReplayMode;
  private readonly opts: ReplayAdapterOptions;
  private cursor = 0;
  private readonly callsAt = new Map<string, number>();
  private readonly messagesCache = new Map<RecordedAttempt, unknown[]>();

  /** From JSONL text (loaded leniently: tokenised fixtures), a session, its events, or an index. */
  constructor(source: ReplaySource, opts: ReplayAdapterOptions = {}) {
    this.recording = isRecordedLog(source) ? source : indexRecording(recordedEvents(source));
    this.opts = opts;
    this.mode = opts.mode ?? 'report';
    this.providers = opts.providers ?? this.recording.providers;
  }

  /** Attempts not served yet (in recorded order). */
  get remaining(): number {
    return this.recording.attempts.length - this.served.length;
  }

  /** The attempt the next request would get, without consuming it. */
  peek(): { attempt: RecordedAttempt | undefined; ref: AttemptRef } {
    const pos = this.opts.position?.();
    if (pos) {
      const n = (this.callsAt.get(`${pos.turn}:${pos.step}`) ?? 0) + 1;
      return { attempt: this.recording.attempt(pos.turn, pos.step, n), ref: { turn: pos.turn, step: pos.step, attempt: n } };
    }
    const a = this.recording.attempts[this.cursor];
    return { attempt: a, ref: a ? { turn: a.turn, step: a.step, attempt: a.attempt } : { turn: 0, step: 0, attempt: this.cursor + 1 } };
  }

  /** Fills in what the recorded adapter filled in (marked `adapterDefaults`), so the logged header matches. */
  resolveCall(config: LlmCallConfig): ResolvedCall {
    return recordedDefaults(this.recording, this.peek().attempt?.firstSeq, config);
  }

  /** The context window the recording's route context gave the model, if any. */
  modelInfo(model: string): ModelInfo | undefined {
    return recordedModelInfo(this.recording, model);
  }

  /** What the recording says the model was sent for this attempt. */
  recordedRequest(attempt: RecordedAttempt): { messages: Message[]; header: EpochHeader | undefined } {
    return {
      messages: deriveMessagesFrom(this.recording.events, attempt.firstSeq - 1),
      header: this.recording.headerBefore(attempt.firstSeq)?.header,
    };
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk> {
    const { attempt, ref } = this.take();
    if (!attempt) {
      const message =
        `no recorded attempt for turn ${ref.turn} step ${ref.step} attempt ${ref.attempt}` +
        `${this.opts.position ? '' : ` (all ${this.recording.attempts.length} served)`}`;
      this.divergences.push({ ...ref, field: 'attempt', path: '$', recorded: undefined, live: request.model, message });
      throw new ReplayError('REPLAY_EXHAUSTED', `replay: ${message}`);
    }
    const found = this.check(request, attempt);
    if (found.length > 0 && this.mode === 'strict') throw new ReplayError('REPLAY_DIVERGED', `replay: ${found[0]!.message}`);
    for (const c of attempt.chunks) yield structuredClone(c);
    if (attempt.finish) return;
    this.opts.onHang?.(attempt);
    const signal = request.signal;
    if (signal && !signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    yield {
      type: 'finish',
      reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'replay: the recorded attempt was cancelled mid-stream' } },
    };
  }

  private take(): { attempt: RecordedAttempt | undefined; ref: AttemptRef } {
    const got = this.peek();
    const key = `${got.ref.turn}:${got.ref.step}`;
    this.callsAt.set(key, (this.callsAt.get(key) ?? 0) + 1);
    if (got.attempt) {
      this.served.push(got.attempt);
      if (!this.opts.position) this.cursor++;
    }
    return got;
  }

  /** Compare the live request with the recorded one; record and return the divergences. */
  private check(request: GenerateRequest, attempt: RecordedAttempt): RequestDivergence[] {
    const ref: AttemptRef = { turn: attempt.turn, step: attempt.step, attempt: attempt.attempt };
    let recordedMessages = this.messagesCache.get(attempt);
    if (!recordedMessages) {
      recordedMessages = withoutIds(deriveMessagesFrom(this.recording.events, attempt.firstSeq - 1));
      this.messagesCache.set(attempt, recordedMessages);
    }
    const header = this.recording.headerBefore(attempt.firstSeq)?.header;
    const fields: [RequestField, unknown, unknown][] = [['messages', recordedMessages, withoutIds(messageArray(request.messages))]];
    if (header) {
      fields.push(
        ['provider', header.config.provider, request.provider],
        ['model', header.config.model, request.model],
        ['system', header.system === '' ? undefined : header.system, request.system || undefined],
        [
          'tools',
          Array.isArray(header.tools) && header.tools.length === 0 ? undefined : header.tools,
          request.tools && request.tools.length > 0 ? request.tools : undefined,
        ],
      );
    }
    const found: RequestDivergence[] = [];
    for (const [field, recorded, live] of fields) {
      const hits: PlaceholderHit[] = [];
      const d = firstDifference(recorded, live, { path: field, placeholders: hits });
      for (const h of hits) this.placeholders.push({ ...ref, field, path: h.path, token: h.token });
      if (!d) continue;
      const div: RequestDivergence = {
        ...ref,
        field,
        path: d.path,
        recorded: d.recorded,
        live: d.live,
        message:
          `turn ${ref.turn} step ${ref.step} attempt ${ref.attempt}: the live request's ${field} first differs from the recorded ` +
          `one at ${d.path}: recorded ${preview(d.recorded)}, live ${preview(d.live)}`,
      };
      found.push(div);
      this.divergences.push(div);
    }
    return found;
  }
}
