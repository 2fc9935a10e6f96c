/**
 * The one path a model request takes to its adapter, for the step loop and for compaction's
 * summariser alike: the "model-visible means recorded" check, the `llm/stream` waterfall (store
 * checkpoints, middleware), the check again where the request leaves for the adapter (after
 * every middleware, so none can slip in unrecorded input), the adapter, and `normalizeStream`
 * (exactly one terminal `finish`; a throw or a broken stream becomes an error finish).
 *
 * What "recorded" means differs by caller, so the caller passes the check: the loop compares the
 * request with `deriveMessages()` and the latest `request/header` (`assertModelVisibleRecorded`),
 * the summariser with the span it condenses and the header in force (compaction/summarize.ts).
 * The first check throws to the caller; the second, inside the stream, ends it with an error finish.
 */
import type { GenerateRequest } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';
import { LlmError } from '../model/failure.js';
import type { HookBus } from '../hooks/bus.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { normalizeStream } from '../llm/runtime.js';
import '../llm/hooks.js';

/** Throws (an `InvariantError`) when the request is not what the log records. */
export type RecordedCheck = (request: GenerateRequest) => void;

export function streamModelRequest(
  bus: HookBus,
  request: GenerateRequest,
  adapter: LlmAdapter | undefined,
  check: RecordedCheck | undefined,
): AsyncIterable<StreamChunk> {
  if (check) check(request);
  const terminal = (req: GenerateRequest): AsyncIterable<StreamChunk> => {
    if (check) check(req);
    if (!adapter) throw new LlmError({ code: 'NO_ADAPTER', message: `no model adapter serves provider "${req.provider}"` });
    return adapter.stream(req);
  };
  const viaHooks: LlmAdapter = {
    providers: [],
    stream: (req) =>
      (async function* () {
        yield* await bus.waterfall('llm/stream', req, terminal);
      })(),
  };
  // A max-tokens finish may leave a block open (the cap cut a tool call mid-arguments, as dsh
  // records it); the assembler drops such calls, so that is a truncation, not a broken stream.
  return normalizeStream(viaHooks, Object.freeze(request), { allowOpenBlocksAtMaxTokens: true });
}
