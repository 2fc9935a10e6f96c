/**
 * Which format a file is in, from its content (never its name). The detectors are one ordered
 * list: dsh's own log first (its header line, or an event line of a headerless log, goes to the
 * codec, which reports what is wrong with it), then each foreign format. A new format (another
 * agent, or another dsh format version) is one more entry.
 *
 * Detection reads the first line; a file whose first line is not a whole JSON value (a
 * pretty-printed document) is parsed whole and given to the formats that read documents.
 */
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { openhands } from './openhands.js';
import { pi } from './pi.js';
import { sweAgent } from './swe-agent.js';
import { firstLine, isDshLine } from './first-line.js';
import { isObj, type Obj } from './source.js';
import type { ForeignFormat } from './types.js';

export { isDshLine };

/** Every foreign format this build reads, in detection order. */
export const FOREIGN_FORMATS: readonly ForeignFormat[] = [pi, codex, claudeCode, openhands, sweAgent];

export type Detection =
  | { kind: 'dsh' }
  | { kind: 'foreign'; format: ForeignFormat }
  /** The first line is not JSON on its own: the whole file must be read as one document. */
  | { kind: 'document' }
  /** Not a log this build knows: `why` says what the first line is. */
  | { kind: 'unknown'; why: string /** The 1-based line of the record it judged, when known. */; line?: number };

/** The names of the formats this build reads, for "unknown format" messages. */
export function knownFormats(): string {
  return ['dsh session log (JSONL)', ...FOREIGN_FORMATS.map((f) => f.label)].join(', ');
}

/**
 * Detect from the first bytes of the file (a few KiB is usually enough: the first line is what
 * counts, and a first line longer than `head` is read whole by the caller when it matters).
 */
export function detect(head: string): Detection {
  const f = firstLine(head);
  if (f.kind === 'codec') return { kind: 'dsh' };
  if (f.kind === 'document') return { kind: 'document' };
  if (!isObj(f.value)) return { kind: 'unknown', why: 'its first line is JSON but not an object', line: f.line };
  const d = detectRecord(f.value);
  return d.kind === 'unknown' ? { ...d, line: f.line } : d;
}

export function detectRecord(v: Obj): Detection {
  if (isDshLine(v)) return { kind: 'dsh' };
  for (const f of FOREIGN_FORMATS) if (f.sniffLine?.(v)) return { kind: 'foreign', format: f };
  const keys = Object.keys(v)
    .slice(0, 6)
    .map((k) => JSON.stringify(k.slice(0, 30)));
  return { kind: 'unknown', why: `its first record (keys ${keys.join(', ') || 'none'}) is not a session header of any of them` };
}

/** The format of a whole JSON document, or undefined. */
export function detectDocument(doc: unknown): ForeignFormat | undefined {
  for (const f of FOREIGN_FORMATS) if (f.sniffDocument?.(doc)) return f;
  return undefined;
}
