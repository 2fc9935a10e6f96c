/** The `llm/stream` capability event: a waterfall around every model call. */
import type { WaterfallHook } from '../hooks/bus.js';
import type { GenerateRequest } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';

declare module '../hooks/bus.js' {
  interface HookMap {
    /**
     * Wraps the adapter call: a listener may observe or transform the stream, or serve the
     * request itself (replay, caching) without calling `next`. What reaches the model must stay
     * what the log records (the runtime invariant checks it at the adapter).
     */
    'llm/stream': WaterfallHook<GenerateRequest, AsyncIterable<StreamChunk>>;
  }
}
