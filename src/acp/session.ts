/**
 * One ACP session: a stored session and the coding agent on it, driven through the agent's
 * public API (prompt, cancel, the approval handler) and followed through the session's event
 * stream, which is projected to `session/update` notifications (updates.ts).
 *
 * A prompt is a user message in the agent's inbox; its turn is the one whose `user/message`
 * carries that message's id, and the prompt resolves when that turn's `turn/end` is in the log,
 * after every update of the turn has been sent: `completed` and `blocked` → `end_turn`,
 * `max-tokens` → `max_tokens`, `aborted` → `cancelled`, `error` → a JSON-RPC error naming the
 * failure. `session/cancel` ends the running turn (cause `user`, recorded on its `turn/end`) and
 * drops prompts still queued. A mode change replaces the agent between turns with one built under
 * the new policy; the new agent's permissions plugin logs the policy it starts with.
 */
import { randomUUID } from 'node:crypto';
import {
  RequestError,
  type AgentContext,
  type ContentBlock as AcpContent,
  type PromptResponse,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
  type Usage,
} from '@agentclientprotocol/sdk/unstable';
import { userMessage } from '../agent/agent.js';
import type { CodingAgent } from '../coding/agent.js';
import type { ModelSwitch } from '../coding/model-switch.js';
import type { LlmAdapter } from '../llm/adapter.js';
import type { ModelRef } from '../llm/select.js';
import { CodedError } from '../model/coded-error.js';
import { addUsage, type TokenUsage } from '../model/usage.js';
import type { SessionEvent, TurnEndReason } from '../session/events.js';
import type { Session } from '../session/session.js';
import type { OpenSession } from '../store/index.js';
import type { AttachmentStore } from './attachments.js';
import { parseCommand, runCommand } from './commands.js';
import { AcpError } from './errors.js';
import { modeId, modeState, policyForMode, policyInLog, type Policy } from './modes.js';
import { promptContent } from './prompt.js';
import { UpdateProjector } from './updates.js';

/** The id of the model selector in `configOptions` and `session/set_config_option`. */
export const MODEL_OPTION = 'model';

interface Pending {
  messageId: string;
  turn?: number;
  usage?: TokenUsage;
  resolve: (r: TurnEndReason | 'discarded') => void;
}

export interface AcpSessionDeps {
  client: AgentContext;
  attachments: AttachmentStore;
  /** A new coding agent on this session (the first, and one per mode change). */
  build(policy: Policy | undefined): Promise<CodingAgent>;
  warn(line: string): void;
  /** The session's model choice (`/model`, the model selector) and the models to offer. */
  models?: {
    switch: ModelSwitch;
    list(): Promise<{ started: ModelRef; configured: string[] }>;
    pick(ref: string): Promise<{ ref: ModelRef; adapter: () => LlmAdapter | undefined }>;
  };
  /** The client terminal a call's command ran in (client-terminal capability). */
  terminalOf?: (callId: string) => string | undefined;
}

export class AcpSession {
  readonly id: string;
  readonly session: Session;
  private coding!: CodingAgent;
  private readonly projector: UpdateProjector;
  private readonly pending: Pending[] = [];
  private notifyChain: Promise<void> = Promise.resolve();
  private readonly releases: (() => void)[] = [];
  private agentReleases: (() => void)[] = [];
  private lastTurn = 0;
  private closed = false;

  private constructor(
    readonly stored: OpenSession,
    private readonly deps: AcpSessionDeps,
  ) {
    this.session = stored.session;
    this.id = stored.session.id;
    this.projector = new UpdateProjector({
      cwd: this.cwd,
      mode: 'live',
      ...(deps.terminalOf ? { terminalOf: deps.terminalOf } : {}),
    });
    this.releases.push(this.session.subscribe((e) => this.onEvent(e)));
  }

  /** Opens the session's agent; the log is closed again if that fails. */
  static async open(stored: OpenSession, deps: AcpSessionDeps): Promise<AcpSession> {
    const s = new AcpSession(stored, deps);
    try {
      s.attach(await deps.build(undefined));
    } catch (e) {
      for (const r of s.releases.splice(0)) r();
      await stored.close();
      throw e;
    }
    return s;
  }

  get cwd(): string {
    return this.session.header.cwd ?? process.cwd();
  }

  get agent(): CodingAgent['agent'] {
    return this.coding.agent;
  }

  private attach(coding: CodingAgent): void {
    this.coding = coding;
    this.agentReleases = [
      // A claim names the prompt's turn even when no user/message follows (a hook blocked the turn).
      coding.agent.on('agent/inbox/claimed', ({ message, turn }) => {
        const p = this.pending.find((x) => x.messageId === message.id && x.turn === undefined);
        if (p) p.turn = turn;
      }),
      coding.agent.on('agent/inbox/discarded', ({ message }) => {
        const i = this.pending.findIndex((x) => x.messageId === message.id && x.turn === undefined);
        if (i >= 0) this.pending.splice(i, 1)[0]!.resolve('discarded');
      }),
    ];
  }

  /** Updates go out in commit order, one after another. */
  send(update: SessionUpdate): void {
    if (this.closed) return;
    const params = { sessionId: this.id, update };
    this.notifyChain = this.notifyChain.then(() => this.deps.client.notify('session/update', params)).catch(() => undefined);
  }

  flushUpdates(): Promise<void> {
    return this.notifyChain;
  }

  private onEvent(e: SessionEvent): void {
    for (const u of this.projector.project(e)) this.send(u);
    switch (e.type) {
      case 'turn/start':
        this.lastTurn = e.data.turn;
        break;
      case 'user/message': {
        const p = this.pending.find((x) => x.messageId === e.data.id && x.turn === undefined);
        if (p) p.turn = this.lastTurn;
        break;
      }
      case 'assistant/message': {
        const p = this.pending.find((x) => x.turn === e.data.turn);
        if (p && e.data.usage) p.usage = p.usage ? addUsage(p.usage, e.data.usage) : e.data.usage;
        break;
      }
      case 'turn/end': {
        const i = this.pending.findIndex((x) => x.turn === e.data.turn);
        if (i >= 0) this.pending.splice(i, 1)[0]!.resolve(e.data.reason);
        break;
      }
      default:
        break;
    }
  }

  /** The stored history as updates (for `session/load`), sent before the load's response. */
  async replayHistory(): Promise<void> {
    const history = new UpdateProjector({ cwd: this.cwd, mode: 'history' });
    for (const e of this.session.events) for (const u of history.project(e)) this.send(u);
    await this.flushUpdates();
  }

  private policy(): Policy {
    return policyInLog(this.session) ?? { sandbox: 'workspace-write', approval: 'ask' };
  }

  modes(): SessionModeState {
    return modeState(this.policy());
  }

  async setMode(id: string): Promise<void> {
    const policy = policyForMode(id);
    if (this.agent.status === 'running')
      throw new AcpError('NOT_IDLE', 'the mode changes between turns: wait for the turn to end, or cancel it');
    if (modeId(this.policy()) === id) return;
    // The new agent exists before the old one goes, so a failure leaves the session working.
    const next = await this.deps.build(policy);
    const old = this.coding;
    for (const r of this.agentReleases.splice(0)) r();
    this.attach(next);
    await old.close();
    this.send({ sessionUpdate: 'current_mode_update', currentModeId: modeId(this.policy()) });
  }

  /** The model selector (a `configOptions` entry): the model of the next requests, and the others configured. */
  async configOptions(): Promise<SessionConfigOption[]> {
    const m = this.deps.models;
    if (!m) return [];
    const { started, configured } = await m.list();
    const current = m.switch.current(started);
    const values = [...new Set([current, `${started.provider}:${started.model}`, ...configured])];
    return [
      {
        id: MODEL_OPTION,
        name: 'Model',
        category: 'model',
        type: 'select',
        currentValue: current,
        options: values.map((v) => ({ value: v, name: v })),
      },
    ];
  }

  /** Use `ref` from the next request on (between turns); the log records it in the next request header. */
  async setModel(ref: string, path: string): Promise<string> {
    const m = this.deps.models;
    if (!m) throw new AcpError('UNSUPPORTED', 'this session cannot change its model');
    if (this.agent.status === 'running')
      throw new AcpError('NOT_IDLE', 'the model changes between turns: wait for the turn to end, or cancel it');
    try {
      const picked = await m.pick(ref);
      m.switch.set(this.agent, picked.ref, picked.adapter);
    } catch (e) {
      if (e instanceof CodedError && !(e instanceof AcpError)) throw new AcpError('MODEL_INVALID', `${e.message} [${e.code}]`, path);
      throw e;
    }
    this.send({ sessionUpdate: 'config_option_update', configOptions: await this.configOptions() });
    return m.switch.current(m.switch.choice!);
  }

  async prompt(blocks: readonly AcpContent[], signal: AbortSignal): Promise<PromptResponse> {
    if (this.closed) throw new AcpError('SESSION_CLOSED', `session ${this.id} is closed`);
    const first = blocks[0];
    const command = blocks.length === 1 && first?.type === 'text' ? parseCommand(first.text) : undefined;
    if (command) {
      if (this.agent.status === 'running')
        throw new AcpError('NOT_IDLE', `/${command.name} runs between turns: wait for the turn to end, or cancel it`);
      const text = await runCommand(
        command,
        {
          agent: this.agent,
          logPath: this.stored.location,
          mode: () => modeId(this.policy()),
          models: async () => {
            const [o] = await this.configOptions();
            return o?.type === 'select'
              ? { current: o.currentValue, all: o.options.flatMap((x) => ('value' in x ? [x.value] : [])) }
              : undefined;
          },
          setModel: (ref) => this.setModel(ref, '$.prompt[0].text'),
        },
        signal,
      );
      this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text }, messageId: randomUUID() });
      await this.flushUpdates();
      return { stopReason: 'end_turn' };
    }
    const content = promptContent(blocks, this.deps.attachments);
    const agent = this.agent;
    const { reason, usage } = await new Promise<{ reason: TurnEndReason | 'discarded'; usage: TokenUsage | undefined }>((resolve) => {
      // The message (and its id) exists before the agent sees it: its turn may start at once.
      const message = userMessage(content);
      const p: Pending = { messageId: message.id, resolve: (reason) => resolve({ reason, usage: p.usage }) };
      this.pending.push(p);
      agent.prompt(message);
    });
    await this.flushUpdates();
    const u = usage ? { usage: acpUsage(usage) } : {};
    if (reason === 'discarded') return { stopReason: 'cancelled' };
    switch (reason.kind) {
      case 'completed':
      case 'blocked':
        return { stopReason: 'end_turn', ...u };
      case 'max-tokens':
        return { stopReason: 'max_tokens', ...u };
      case 'aborted':
      case 'interrupted':
        return { stopReason: 'cancelled', ...u };
      case 'error':
        throw RequestError.internalError({ code: reason.error.code }, `turn failed: ${reason.error.message}`);
    }
  }

  cancel(): void {
    this.agent.cancel({ kind: 'user' });
  }

  /** Dispose the agent (a running turn ends `aborted`, cause `disposed`), then close the log. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.coding.close();
    } finally {
      try {
        const r = await this.stored.close();
        if (!r.ok) this.deps.warn(`session ${this.id}: the log could not be closed cleanly: ${r.error.message} [${r.error.code}]`);
      } finally {
        this.closed = true;
        for (const r of [...this.agentReleases.splice(0), ...this.releases.splice(0)]) r();
        for (const p of this.pending.splice(0)) p.resolve('discarded');
      }
    }
  }
}

/** Our usage as ACP's: its input counts every prompt token, cached ones included. */
export function acpUsage(u: TokenUsage): Usage {
  const input = u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
  const out: Usage = { totalTokens: input + u.outputTokens, inputTokens: input, outputTokens: u.outputTokens };
  if (u.reasoningTokens !== undefined) out.thoughtTokens = u.reasoningTokens;
  if (u.cacheReadTokens !== undefined) out.cachedReadTokens = u.cacheReadTokens;
  if (u.cacheWriteTokens !== undefined) out.cachedWriteTokens = u.cacheWriteTokens;
  return out;
}
