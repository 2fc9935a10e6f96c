/**
 * The dsh SDK protocol server (protocol.ts has the wire): JSON-RPC requests in, responses and
 * notifications out, over any line transport. It drives each session's agent through the
 * agent's public API only (`prompt`, `cancel`, `status`) and streams the session's committed
 * events as they are written, so a client sees exactly what the log holds. Opening sessions
 * (store, config, model) is the host's job: the CLI passes one in (src/cli/sdk.ts).
 *
 * Requests are handled one after another, in the order their lines arrived; a prompt answers
 * as soon as it is queued, and the turn's progress follows as `session.event` / `session.status`
 * notifications. No line, however malformed, ends the server: each gets a JSON-RPC error.
 */
import type { Agent } from '../agent/agent.js';
import { CodedError } from '../model/coded-error.js';
import type { SessionEvent } from '../session/events.js';
import { MAX_LINE_BYTES } from './lines.js';
import {
  errorResponse,
  initializeParams,
  notification,
  parseLine,
  promptParams,
  response,
  SDK_METHODS,
  SdkError,
  sessionIdParam,
  type InitializeParams,
} from './protocol.js';

/** One open session, as the host made it. */
export interface SdkSession {
  readonly agent: Agent;
  /** Dispose the agent (a running turn ends `aborted`, cause `disposed`) and close the log. */
  close(): Promise<void>;
}

export interface SdkHost {
  /** Check the workspace and model once; what it returns is added to the `initialize` result. */
  initialize(params: InitializeParams): Promise<Record<string, unknown>>;
  /**
   * Open the stored session `id`, or create it when the store has none. `onEvent` must see every
   * event the session commits from the moment it is open, the agent's setup events included.
   */
  open(id: string, onEvent: (event: SessionEvent) => void): Promise<SdkSession>;
}

export interface SdkServerOptions {
  /** Writes one message (one line) to the client. */
  send: (message: Record<string, unknown>) => void;
  serverInfo: { name: string; version: string };
  /** Called once `shutdown` has been answered and every session is closed. */
  onShutdown?: () => void;
}

interface Open {
  session: SdkSession;
  detach: () => void;
}

export class SdkServer {
  private initialized = false;
  private shuttingDown = false;
  private readonly sessions = new Map<string, Open>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: SdkHost,
    private readonly opts: SdkServerOptions,
  ) {}

  /** Sessions open now (ids). */
  get openSessions(): string[] {
    return [...this.sessions.keys()];
  }

  /** Take one line from the client; lines are handled in arrival order. Never rejects. */
  accept(line: string): Promise<void> {
    this.queue = this.queue.then(() => this.handle(line));
    return this.queue;
  }

  /** A line too long to read (lines.ts dropped it): refused like a malformed one. */
  refuseOversized(bytes: number): Promise<void> {
    this.queue = this.queue.then(() =>
      this.opts.send(
        errorResponse(
          null,
          new SdkError('INVALID_REQUEST', `a line of ${bytes} bytes is over the ${MAX_LINE_BYTES}-byte limit; it was dropped`),
        ),
      ),
    );
    return this.queue;
  }

  /** Close every open session (end of input, a signal). */
  async closeAll(): Promise<void> {
    const open = [...this.sessions.values()];
    this.sessions.clear();
    for (const o of open) {
      try {
        await o.session.close();
      } finally {
        o.detach();
      }
    }
  }

  private async handle(line: string): Promise<void> {
    if (line.trim() === '') return;
    const req = parseLine(line);
    if ('error' in req) {
      this.opts.send(errorResponse(req.id, req.error));
      return;
    }
    try {
      const result = await this.dispatch(req.method, req.params);
      if (req.answered) this.opts.send(response(req.id, result));
      if (req.method === 'shutdown') {
        await this.closeAll();
        this.opts.onShutdown?.();
      }
    } catch (e) {
      if (!req.answered) return;
      this.opts.send(errorResponse(req.id, asSdkError(e)));
    }
  }

  private async dispatch(method: string, params: unknown): Promise<unknown> {
    if (!(SDK_METHODS as readonly string[]).includes(method))
      throw new SdkError('METHOD_NOT_FOUND', `no method ${JSON.stringify(method)} (${SDK_METHODS.join(', ')})`);
    if (this.shuttingDown) throw new SdkError('SHUTTING_DOWN', 'the server is shutting down');
    switch (method) {
      case 'initialize': {
        const p = initializeParams(params);
        if (this.initialized) throw new SdkError('ALREADY_INITIALIZED', 'initialize was already answered; it is once per process');
        const extra = await this.host.initialize(p);
        this.initialized = true;
        return { serverInfo: this.opts.serverInfo, capabilities: { cancel: true, close: true }, ...extra };
      }
      case 'shutdown':
        this.shuttingDown = true;
        return {};
    }
    if (!this.initialized) throw new SdkError('NOT_INITIALIZED', `${method} before initialize`);
    switch (method) {
      case 'session/prompt': {
        const p = promptParams(params);
        const open = this.sessions.get(p.sessionId) ?? (await this.openSession(p.sessionId));
        const agent = open.session.agent;
        if (agent.status === 'running')
          throw new SdkError('SESSION_BUSY', `session ${p.sessionId} is running a turn; wait for its idle status, or session/cancel it`, {
            sessionId: p.sessionId,
          });
        const message = agent.prompt(p.contentBlocks);
        return { messageId: message.id };
      }
      case 'session/cancel': {
        const id = sessionIdParam(params);
        const open = this.known(id);
        const running = open.session.agent.status === 'running';
        open.session.agent.cancel({ kind: 'user' });
        return { cancelled: running };
      }
      case 'session/close': {
        const id = sessionIdParam(params);
        const open = this.known(id);
        this.sessions.delete(id);
        try {
          await open.session.close();
        } finally {
          open.detach();
        }
        return {};
      }
    }
    throw new SdkError('INTERNAL_ERROR', `method ${method} has no handler`);
  }

  private known(id: string): Open {
    const open = this.sessions.get(id);
    if (!open)
      throw new SdkError('SESSION_NOT_FOUND', `session ${id} is not open here (session/prompt opens or creates it)`, { sessionId: id });
    return open;
  }

  private async openSession(id: string): Promise<Open> {
    const send = this.opts.send;
    const onEvent = (event: SessionEvent): void => send(notification('session.event', { sessionId: id, event }));
    let session: SdkSession;
    try {
      session = await this.host.open(id, onEvent);
    } catch (e) {
      const cause = e instanceof CodedError ? e.code : 'UNKNOWN';
      throw new SdkError('SESSION_START_FAILED', `session ${id} could not start: ${(e as Error).message}`, { sessionId: id, cause });
    }
    const detach = session.agent.on('agent/status', ({ status }) => send(notification('session.status', { sessionId: id, status })));
    const open = { session, detach };
    this.sessions.set(id, open);
    return open;
  }
}

function asSdkError(e: unknown): SdkError {
  if (e instanceof SdkError) return e;
  return new SdkError('INTERNAL_ERROR', e instanceof Error ? e.message : String(e), e instanceof CodedError ? { cause: e.code } : {});
}
