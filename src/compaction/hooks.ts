/** Live compaction events, for UIs: the durable record is the `compaction/*` events in the log. */
import type { EmitHook } from '../hooks/bus.js';
import type { AgentContext } from '../agent/context.js';
import type { CompactionError } from './errors.js';
import type { CompactionResult } from './transaction.js';

export type CompactionTrigger = 'pressure' | 'context-overflow' | 'manual';

declare module '../hooks/bus.js' {
  interface HookMap {
    'compaction/done': EmitHook<{ agent: AgentContext; trigger: CompactionTrigger; result: CompactionResult }>;
    /** An automatic compaction failed and the turn went on with the full history. */
    'compaction/failed': EmitHook<{ agent: AgentContext; trigger: CompactionTrigger; error: CompactionError }>;
  }
}
