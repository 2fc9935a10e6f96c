/** The shapes every importer shares: what a format is, and what reading one gives. */
import type { BuiltSession } from './builder.js';
import type { Obj } from './source.js';

export type ForeignFormatId = 'claude-code' | 'codex' | 'pi' | 'openhands' | 'swe-agent';

export interface FormatInfo {
  id: ForeignFormatId;
  /** What people call it, e.g. "Claude Code transcript". */
  label: string;
}

export interface ImportedSession extends BuiltSession {
  /** How to name this session of the file: `main`, or a child's or record's key (`FILE#key`). */
  key: string;
  /** One line saying what it is (a sidechain's task, an evaluation instance). */
  label: string;
}

export interface SourceInput {
  text: string;
  file: string | undefined;
}

export interface ForeignFormat extends FormatInfo {
  /** Does a file whose first line parses to this object belong to this format? */
  sniffLine?(first: Obj): boolean;
  /** Does this whole JSON document (a file that is one JSON value) belong to this format? */
  sniffDocument?(doc: unknown): boolean;
  /** Read the sessions of the file, the primary one first. */
  read(src: SourceInput, doc?: unknown): ImportedSession[];
}

export interface ImportResult {
  format: FormatInfo;
  /** The primary session first; then children (sidechains) or further records. */
  sessions: ImportedSession[];
}
