/**
 * What a file's first bytes say before any format is asked: blank, a JSON document, not JSON, or
 * a first record, and whether that record is a dsh log's. Kept apart from the formats (detect.ts)
 * so that reading a dsh log, the common case, never loads the importers.
 */
import { isObj, type Obj } from './source.js';

/** A dsh log's first line: its session header (any format version), or an event of a log missing it. */
export function isDshLine(o: Obj): boolean {
  // Any session header that is not pi's (which has timestamp text and no createdAt): a damaged
  // dsh header is the codec's to report.
  if (o.type === 'session') return !(typeof o.timestamp === 'string' && !('createdAt' in o));
  return typeof o.type === 'string' && typeof o.seq === 'number' && 'data' in o;
}

export type FirstLine =
  /** Empty or blank, or not JSON at all: the dsh codec reports it. */
  | { kind: 'codec' }
  /** A JSON array, or a first line that is not a whole JSON value: read the file as one document. */
  | { kind: 'document' }
  /** The first line's value, and the 1-based line it is on (blank lines before it count). */
  | { kind: 'record'; value: unknown; line: number };

export function firstLine(head: string): FirstLine {
  const text = head.charCodeAt(0) === 0xfeff ? head.slice(1) : head;
  const start = text.search(/\S/);
  if (start < 0) return { kind: 'codec' };
  const c = text[start];
  if (c === '[') return { kind: 'document' };
  if (c !== '{') return { kind: 'codec' };
  const nl = text.indexOf('\n', start);
  const first = text.slice(start, nl < 0 ? undefined : nl).trim();
  let value: unknown;
  try {
    value = JSON.parse(first);
  } catch {
    // A pretty-printed document (or a damaged log, which the document parse reports with its position).
    return { kind: 'document' };
  }
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < start; i = text.indexOf('\n', i + 1)) line++;
  return { kind: 'record', value, line };
}

/** True when `detect(head)` is certain to say dsh without asking any other format. */
export function plainlyDsh(head: string): boolean {
  const f = firstLine(head);
  return f.kind === 'codec' || (f.kind === 'record' && isObj(f.value) && isDshLine(f.value));
}
