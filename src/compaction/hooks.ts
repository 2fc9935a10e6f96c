/** Live compaction events, for UIs: the durable record is the `compaction/*` events in the log. */
import type { EmitHook } from '../hooks/bus.js';
import type { Agent } from '../agent/agent.js';
import type { CompactionError } from './errors.js';
import type { CompactionResult } from './transaction.js';

export type CompactionTrigger = 'pressure' | 'context-overflow' | 'manual';

declare module '../hooks/bus.js' {
  interface HookMap {
    'compaction/done': EmitHook<{ agent: Agent; trigger: CompactionTrigger; result: CompactionResult }>;
    /** An automatic compaction failed and the turn went on with the full history. */
    'compaction/failed': EmitHook<{ agent: Agent; trigger: CompactionTrigger; error: CompactionError }>;
  }
}
