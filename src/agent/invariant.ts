/**
 * "Model-visible means recorded". Before every model call, the request must be
 * reconstructable from the log: its messages equal `session.deriveMessages()`, and provider,
 * model, system prompt, tools and sampling equal the latest `request/header`. A violation throws
 * `InvariantError` with a readable diff of the first difference.
 *
 * The check is cheap on the normal path: the loop passes the very snapshot the session's
 * projection returns, so equal identity proves equal content. Anything else is compared
 * structurally.
 */
import { messageArray, type MessageList } from '../model/history.js';
import type { GenerateRequest } from '../model/request.js';
import type { EpochHeader } from '../session/events.js';
import type { Session } from '../session/session.js';
import { firstDifference } from '../session/json-diff.js';
import { LlmError } from '../model/failure.js';

/** An `LlmError` so the turn records it verbatim (`code: 'INVARIANT'`), and no retry policy retries it. */
export class InvariantError extends LlmError {
  constructor(message: string) {
    super({ code: 'INVARIANT', message });
    this.name = 'InvariantError';
  }
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 160 ? `${s.slice(0, 160)}…` : s;
}

/** Path and both sides of the first difference, or undefined when equal. */
function differs(request: unknown, logged: unknown, path: string): string | undefined {
  const d = firstDifference(logged, request, { path });
  return d && `${d.path}: the request has ${show(d.live)}, the log has ${show(d.recorded)}`;
}

/** The first difference between the request's messages and the recorded ones, or undefined. */
export function messagesDifference(request: MessageList, logged: MessageList): string | undefined {
  // The loop passes the very snapshot the projection returns: equal identity, equal content.
  return request === logged ? undefined : differs(messageArray(request), messageArray(logged), 'messages');
}

/**
 * The first of provider, model, sampling, system prompt and tools where the request differs from
 * `header`, as `[field, difference]`, or undefined.
 */
export function headerDifference(request: GenerateRequest, header: EpochHeader): [string, string] | undefined {
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
    const d = differs(got, want, name);
    if (d) return [name, d];
  }
  return undefined;
}

export function assertModelVisibleRecorded(request: GenerateRequest, session: Session): void {
  const m = messagesDifference(request.messages, session.deriveMessages());
  if (m) throw new InvariantError(`model-visible input is not recorded in session ${session.id}: ${m}`);
  const header = session.requestHeader();
  if (!header) throw new InvariantError(`session ${session.id} has no request/header, so this request's configuration is not recorded`);
  const h = headerDifference(request, header);
  if (h) throw new InvariantError(`request ${h[0]} differs from the latest request/header in session ${session.id}: ${h[1]}`);
}
