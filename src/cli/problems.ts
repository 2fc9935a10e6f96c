/**
 * Problems (refusals and warnings) in one shape for both output modes: a human line naming
 * file, line, seq and rule, or a JSON record with the same fields.
 */
// From the modules, not the layer's index: this loads with every command, and the index would
// link the whole codec into the CLI's entry chunk (scripts/bundle.mjs).
import { SessionError } from '../session/errors.js';
import type { LogWarning } from '../session/codec/jsonl.js';
import { CliError } from './errors.js';
// The error classes alone (leaf modules): every command loads this file, most never the store or the importers.
import { StoreError } from '../store/errors.js';
import { ImportError } from '../import/errors.js';
import { oneLine } from './text.js';
import type { Output } from './output.js';

export interface Problem {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  file: string;
  line?: number;
  seq?: number;
  rule?: string;
  path?: string;
  eventType?: string;
}

/**
 * The library prefixes messages with where it was ("x.jsonl:line 9: ", "x.jsonl:6: ", "seed …");
 * the CLI prints the location in its own columns, so the message keeps only the why.
 */
export function bareMessage(message: string, file: string | undefined): string {
  let m = message;
  if (file !== undefined && m.startsWith(`${file}:`)) m = m.slice(file.length + 1);
  m = m.replace(/^(?:line )?\d+: /, '');
  if (m.startsWith('seed ')) m = m.slice(5);
  return m;
}

/** A known refusal as a problem; anything else is a bug and is rethrown. */
export function problemFromError(e: unknown, file: string): Problem {
  if (e instanceof CliError) {
    const p: Problem = { severity: 'error', code: e.code, message: e.message, file: e.file ?? file };
    if (e.line !== undefined) p.line = e.line;
    return p;
  }
  if (e instanceof SessionError) {
    const d = e.details;
    const p: Problem = { severity: 'error', code: e.code, message: bareMessage(e.message, d.file ?? file), file };
    if (d.line !== undefined) p.line = d.line;
    if (d.seq !== undefined) p.seq = d.seq;
    if (d.rule !== undefined) p.rule = d.rule;
    if (d.path !== undefined) p.path = d.path;
    if (d.eventType !== undefined) p.eventType = d.eventType;
    return p;
  }
  // Another agent's file that is not one this build reads, or breaks its own format.
  if (e instanceof ImportError) {
    const p: Problem = { severity: 'error', code: e.code, message: bareMessage(e.message, e.details.file ?? file).trimStart(), file };
    if (e.details.line !== undefined) p.line = e.details.line;
    if (e.details.path !== undefined) p.path = e.details.path;
    return p;
  }
  // The store's refusals of a session id (a compressed log, an id in two places).
  if (e instanceof StoreError) return { severity: 'error', code: e.code, message: bareMessage(e.message, e.details.path ?? file), file };
  throw e;
}

export function problemFromWarning(w: LogWarning, file: string): Problem {
  const p: Problem = { severity: 'warning', code: w.code, message: bareMessage(w.message, file), file };
  if (w.line !== undefined) p.line = w.line;
  if (w.seq !== undefined) p.seq = w.seq;
  return p;
}

/** `file:line: error CODE (seq 7, rule trace): message`, all of it safe to print. */
export function formatProblem(p: Problem, out: Output): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}`;
  const tags: string[] = [];
  if (p.seq !== undefined) tags.push(`seq ${p.seq}`);
  if (p.rule !== undefined) tags.push(`rule ${p.rule}`);
  const sev = p.severity === 'error' ? out.style('red', `error ${p.code}`) : out.style('yellow', `warning ${p.code}`);
  return `${oneLine(where)}: ${sev}${tags.length ? ` (${tags.join(', ')})` : ''}: ${oneLine(p.message)}`;
}
