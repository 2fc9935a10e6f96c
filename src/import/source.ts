/**
 * Reading another agent's file: JSON lines with their line numbers, whole JSON documents with a
 * precise position when they do not parse, timestamps, and small accessors for untyped records.
 */
import { ImportError } from './errors.js';
import type { LossLedger } from './losses.js';

export type Obj = Record<string, unknown>;

export interface SourceRecord {
  /** 1-based line in the file. */
  line: number;
  value: Obj;
}

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A token count as dsh keeps it: a finite number ≥ 0 (anything else is absent). */
export function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? (Object.is(v, -0) ? 0 : v) : undefined;
}

/**
 * Epoch ms of a timestamp: ISO 8601 text (one without a zone is UTC, as agents write it from
 * UTC clocks; fractions beyond milliseconds are cut) or a number of ms or seconds.
 */
export function epochMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v < 1e11 ? Math.round(v * 1000) : Math.round(v);
  if (typeof v !== 'string') return undefined;
  const m = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(v.trim());
  if (!m) return undefined;
  const frac = m[2] ? `.${m[2].slice(0, 3).padEnd(3, '0')}` : '';
  const ms = Date.parse(`${m[1]!.replace(' ', 'T')}${frac}${m[3] ?? 'Z'}`);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** `-0` parses but is not lossless JSON in a dsh log (it is written back as 0): read as 0. */
const noNegativeZero = (_k: string, v: unknown): unknown => (Object.is(v, -0) ? 0 : v);

/** JSON.parse, with `-0` read as 0 (the reviver costs time, so only when the text could hold one). */
export function parseJson(text: string): unknown {
  return text.includes('-0') ? JSON.parse(text, noNegativeZero) : JSON.parse(text);
}

/**
 * The records of a JSON-lines file. A line that is not a JSON object (a torn last line, garbage
 * between records) is counted as a loss with its line, never a refusal: the rest still reads.
 */
export function jsonLines(text: string, losses: LossLedger): SourceRecord[] {
  const out: SourceRecord[] = [];
  let line = 0;
  let start = 0;
  if (text.charCodeAt(0) === 0xfeff) start = 1;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    const raw = text.slice(start, end).replace(/\r$/, '');
    start = end + 1;
    if (raw.trim() === '') continue;
    let v: unknown;
    try {
      v = parseJson(raw);
    } catch {
      const last = end >= text.length;
      losses.add(last ? 'last line (incomplete: the file was cut mid-write)' : 'line that is not JSON', 'not read', line);
      continue;
    }
    if (!isObj(v)) {
      losses.add('line that is not a JSON object', 'not read', line);
      continue;
    }
    out.push({ line, value: v });
  }
  return out;
}

/** A whole JSON document; a syntax error names its line and column. */
export function jsonDocument(text: string, file: string | undefined, format: string): unknown {
  try {
    return parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /position (\d+)/.exec(msg);
    let where = '';
    let line: number | undefined;
    if (pos) {
      const p = Number(pos[1]);
      const before = text.slice(0, p);
      line = before.split('\n').length;
      where = ` at line ${line}, column ${p - before.lastIndexOf('\n')}`;
    }
    const truncated = /Unexpected end of JSON input/.test(msg) || (pos !== null && Number(pos[1]) >= text.trimEnd().length - 1);
    throw new ImportError(
      'MALFORMED_SOURCE',
      `${file ?? '<input>'}: the ${format} is not valid JSON${where}${truncated ? ' (the file looks cut short)' : ''}: ${msg}`,
      {
        ...(file !== undefined ? { file } : {}),
        ...(line !== undefined ? { line } : {}),
        format,
      },
    );
  }
}

/** Text of an Anthropic/OpenAI-style content value: a string, or text parts of a block list. */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  const parts: string[] = [];
  for (const b of arr(v)) {
    if (typeof b === 'string') parts.push(b);
    else if (isObj(b) && typeof b.text === 'string') parts.push(b.text);
  }
  return parts.join('\n');
}
