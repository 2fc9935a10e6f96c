/**
 * What a recording says about the call a replay serves, beyond its chunks: the defaults the
 * recorded adapter filled in (so the replayed run logs the same request header) and the context
 * window the recorded route context gave the model. Shared by the two adapters that serve recorded
 * streams: `ReplayAdapter` (re-running a session, `dsh replay`) and `ScriptAdapter` (a live
 * surface fed a recording, `--replay-model`).
 */
import type { ModelInfo, ResolvedCall } from './adapter.js';
import type { AdapterDefaults, LlmCallConfig } from '../model/request.js';
import type { RecordedLog } from '../session/recording.js';

/**
 * `config` with what the recording's adapter filled in for the call whose first chunk is at
 * `firstSeq` (the fields its header marks `adapterDefaults`), when the live call asks for the same
 * provider and model and leaves them unset.
 */
export function recordedDefaults(recording: RecordedLog, firstSeq: number | undefined, config: LlmCallConfig): ResolvedCall {
  const recorded = firstSeq === undefined ? undefined : recording.headerBefore(firstSeq)?.header;
  if (!recorded?.adapterDefaults || recorded.config.provider !== config.provider || recorded.config.model !== config.model)
    return { config };
  const out: LlmCallConfig = { ...config };
  const marked: AdapterDefaults = {};
  for (const k of Object.keys(recorded.adapterDefaults) as (keyof AdapterDefaults)[]) {
    const v = recorded.config[k];
    if (recorded.adapterDefaults[k] && out[k] === undefined && v !== undefined) {
      (out as unknown as Record<string, unknown>)[k] = v;
      marked[k] = true;
    }
  }
  return Object.keys(marked).length > 0 ? { config: out, adapterDefaults: marked } : { config: out };
}

/** The context window the recording's latest route context for `model` names, if any. */
export function recordedModelInfo(recording: RecordedLog, model: string): ModelInfo | undefined {
  for (let i = recording.events.length - 1; i >= 0; i--) {
    const e = recording.events[i]!;
    if (e.type === 'request/context' && e.data.model === model && e.data.contextWindow !== undefined)
      return { contextWindow: e.data.contextWindow };
  }
  return undefined;
}
