/**
 * Request header helpers. A `request/header` event is a full snapshot of everything a request
 * carries besides its messages; the latest one in the log is in force. Canonical form drops an
 * empty `system` and empty `tools`, so equality never turns on "absent" versus "empty".
 */
import type { EpochHeader, SessionEvent } from './events.js';
import { deepEqual } from './surface.js';

export function canonicalHeader(h: EpochHeader): EpochHeader {
  const out: EpochHeader = { config: h.config };
  if (h.adapterDefaults && Object.keys(h.adapterDefaults).length > 0) out.adapterDefaults = h.adapterDefaults;
  // Non-string/non-array values only occur in tokenised fixtures ("{{tools}}"); keep them as found.
  const { system, tools } = h;
  if (system !== undefined && system !== '') out.system = system;
  if (tools !== undefined && !(Array.isArray(tools) && tools.length === 0)) out.tools = tools;
  return out;
}

/**
 * The tool names a header lists: tools are recorded as schemas, or by some dsh writers as bare
 * names. Undefined when the header has no tool list (absent, or a fixture placeholder).
 */
export function headerToolNames(tools: unknown): string[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return tools.map((t) =>
    typeof t === 'string'
      ? t
      : typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string'
        ? (t as { name: string }).name
        : '',
  );
}

/** The tool schemas a header recorded, when it recorded schemas (not names, not a placeholder). */
export function headerToolSchemas<T>(tools: readonly T[] | unknown): T[] | undefined {
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'object' || t === null)) return undefined;
  return tools as T[];
}

/** Equality over config, adapter-default markers, system and tools (tools in order). */
export function headerEquals(a: EpochHeader | undefined, b: EpochHeader | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return deepEqual(canonicalHeader(a), canonicalHeader(b));
}

/** The request header in force at the end of `events` (canonical), if any. */
export function foldRequestHeader(events: readonly SessionEvent[]): EpochHeader | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'request/header') return canonicalHeader(e.data.header);
  }
  return undefined;
}
