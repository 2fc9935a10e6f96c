/**
 * "Model-visible means recorded" (dsh inventory 4). Before every model call, the request must be
 * reconstructable from the log: its messages equal `session.deriveMessages()`, and provider,
 * model, system prompt, tools and sampling equal the latest `request/header`. A violation throws
 * `InvariantError` with a readable diff of the first difference.
 *
 * The check is cheap on the normal path: the loop passes the very frozen array the session's
 * projection cache returns, so equal identity proves equal content. Anything else is compared
 * structurally.
 */
import type { GenerateRequest } from '../model/request.js';
import type { Session } from '../session/session.js';
import { deepEqual } from '../session/surface.js';
import { LlmError } from '../model/failure.js';

/** An `LlmError` so the turn records it verbatim (`code: 'INVARIANT'`), and no retry policy retries it. */
export class InvariantError extends LlmError {
  constructor(message: string) {
    super({ code: 'INVARIANT', message });
    this.name = 'InvariantError';
  }
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return 'undefined';
  return s.length > 160 ? `${s.slice(0, 160)}…` : s;
}

/** Path and both sides of the first difference between two JSON values. */
export function firstDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (deepEqual(a, b)) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return `${path}: length ${a.length} vs ${b.length}`;
  }
  if (typeof a === 'object' && typeof b === 'object' && a && b && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: request has ${show(a)}, the log has ${show(b)}`;
}

export function assertModelVisibleRecorded(request: GenerateRequest, session: Session): void {
  const logged = session.deriveMessages();
  if (request.messages !== logged) {
    const d = firstDifference(request.messages, logged, 'messages');
    if (d) throw new InvariantError(`model-visible input is not recorded in session ${session.id}: ${d}`);
  }
  const header = session.requestHeader();
  if (!header) throw new InvariantError(`session ${session.id} has no request/header, so this request's configuration is not recorded`);
  const c = header.config;
  const fields: [string, unknown, unknown][] = [
    ['provider', request.provider, c.provider],
    ['model', request.model, c.model],
    ['reasoningEffort', request.reasoningEffort, c.reasoningEffort],
    ['temperature', request.temperature, c.temperature],
    ['maxTokens', request.maxTokens, c.maxTokens],
    ['stop', request.stop, c.stop],
    ['system', request.system || undefined, header.system],
    ['tools', request.tools && request.tools.length > 0 ? request.tools : undefined, header.tools],
  ];
  for (const [name, got, want] of fields) {
    const d = firstDifference(got, want, name);
    if (d) throw new InvariantError(`request ${name} differs from the latest request/header in session ${session.id}: ${d}`);
  }
}
