/**
 * Other agents' logs as dsh sessions: format detection by content and one importer per agent
 * (Claude Code, Codex, pi, OpenHands, SWE-agent). See docs/import.md.
 */
export { ImportError, type ImportErrorCode, type ImportErrorDetails } from './errors.js';
export { FOREIGN_FORMATS, detect, detectDocument, detectRecord, isDshLine, knownFormats, type Detection } from './detect.js';
export { importText, importDetected, asLoadedLog, splitSessionKey, type ImportOptions, type ImportedLog } from './read.js';
export { IMPORT_SOURCE_EVENT, IMPORT_COST_EVENT, IMPORT_USAGE_EVENT, IMPORT_CHILD_EVENT, SessionBuilder } from './builder.js';
export type { Loss } from './losses.js';
export type { ForeignFormat, ForeignFormatId, FormatInfo, ImportedSession, ImportResult } from './types.js';
