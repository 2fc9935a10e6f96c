/**
 * Session events → ACP `session/update`s: a projection of the log, nothing else. Live, it follows
 * `session.subscribe()` and streams text and reasoning deltas as they commit; for `session/load`
 * it projects the stored history with whole messages instead of deltas. Either way the client
 * sees only what the log holds.
 *
 * - `assistant/chunk` text / reasoning deltas → `agent_message_chunk` / `agent_thought_chunk`
 *   (live only), each with a `messageId` for its model response and, in `_meta.dsh.block`, the
 *   block it belongs to, so a client (or the conformance runner) can join a block's deltas.
 * - `assistant/message` → in history, one chunk per text or reasoning block; live, a
 *   `usage_update` when the response reported usage and the context window is known.
 * - `user/message` typed by the user → `user_message_chunk` (history only: live, the client sent it).
 * - `tool/call` → `tool_call` (kind, title, locations, raw input; status `in_progress`).
 * - `tool/result` → `tool_call_update` (`completed` or `failed`, the diffs of an edit or write,
 *   the client terminal a command ran in, the result's text: a command's output).
 * - `todo/write` → `plan`.
 */
import type { ContentBlock as AcpContent, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk/unstable';
import type { ContentBlock, UserMessage } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import type { SessionEvent } from '../session/events.js';
import { parseArgs, toolDiffs, toolKind, toolLocations, toolTitle } from './tool-view.js';

export interface ProjectorOptions {
  cwd: string;
  /** `history`: whole messages, no deltas, user prompts echoed (for `session/load`). */
  mode: 'live' | 'history';
  /** The client terminal a call's command ran in, when it ran in one. */
  terminalOf?: (callId: string) => string | undefined;
}

/** Our content blocks as ACP content (an image is named: the bytes are not in the log). */
export function acpContent(blocks: readonly ContentBlock[]): AcpContent[] {
  const out: AcpContent[] = [];
  for (const b of blocks) {
    if (b.type === 'text') out.push({ type: 'text', text: b.text });
    else if (b.type === 'image')
      out.push({ type: 'text', text: `[image ${b.attachment.name ?? b.attachment.attachmentId} (${b.attachment.mediaType})]` });
    else if (b.type === 'tool-result') out.push(...acpContent(b.content));
  }
  return out;
}

/** The context in use after a response: what it read (cache included) plus what it wrote. */
export function contextUsed(u: TokenUsage): number {
  return u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens;
}

export class UpdateProjector {
  private readonly calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  private contextWindow: number | undefined;
  private attempt = 0;
  private attemptOpen = false;
  private turn = 0;
  private step = 0;

  constructor(private readonly opts: ProjectorOptions) {}

  private messageId(): string {
    return `${this.turn}.${this.step}.${this.attempt}`;
  }

  project(e: SessionEvent): SessionUpdate[] {
    const history = this.opts.mode === 'history';
    switch (e.type) {
      case 'step/start':
        this.turn = e.data.turn;
        this.step = e.data.step;
        this.attempt = 0;
        this.attemptOpen = false;
        return [];
      case 'request/context':
        if (e.data.contextWindow !== undefined) this.contextWindow = e.data.contextWindow;
        return [];
      case 'assistant/chunk': {
        if (!this.attemptOpen) {
          this.attempt++;
          this.attemptOpen = true;
        }
        const c = e.data.chunk;
        if (c.type === 'finish') this.attemptOpen = false;
        if (history) return [];
        const _meta = { dsh: { block: 'index' in c ? c.index : 0 } };
        const messageId = this.messageId();
        if (c.type === 'text-delta' && c.text !== '')
          return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: c.text }, messageId, _meta }];
        if (c.type === 'reasoning-delta' && c.text !== '')
          return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: c.text }, messageId, _meta }];
        return [];
      }
      case 'assistant/message': {
        this.attemptOpen = false;
        const out: SessionUpdate[] = [];
        if (history) {
          e.data.message.content.forEach((b, block) => {
            const base = { messageId: e.data.message.id, _meta: { dsh: { block } } };
            if (b.type === 'text' && b.text !== '')
              out.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: b.text }, ...base });
            else if (b.type === 'reasoning' && b.text !== '')
              out.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: b.text }, ...base });
          });
        } else if (e.data.usage && this.contextWindow !== undefined) {
          out.push({ sessionUpdate: 'usage_update', used: contextUsed(e.data.usage), size: this.contextWindow });
        }
        return out;
      }
      case 'user/message':
        return history && e.data.source.kind === 'user' ? this.userChunks(e.data) : [];
      case 'tool/call': {
        const args = parseArgs(e.data.arguments);
        this.calls.set(e.data.callId, { name: e.data.name, args });
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: e.data.callId,
            title: toolTitle(e.data.name, args),
            kind: toolKind(e.data.name),
            status: 'in_progress',
            locations: toolLocations(e.data.name, args, this.opts.cwd),
            rawInput: args,
          },
        ];
      }
      case 'tool/result': {
        const block = e.data.message.content[0];
        const callId = block.toolCallId;
        const call = this.calls.get(callId);
        const content: ToolCallContent[] = [];
        if (call && !block.isError) content.push(...toolDiffs(call.name, call.args, e.data.meta, this.opts.cwd));
        const terminalId = this.opts.terminalOf?.(callId);
        if (terminalId !== undefined) content.push({ type: 'terminal', terminalId });
        for (const c of acpContent(block.content)) content.push({ type: 'content', content: c });
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: callId,
            status: block.isError ? 'failed' : 'completed',
            content,
            ...(e.data.error ? { rawOutput: { error: e.data.error } } : {}),
          },
        ];
      }
      case 'todo/write':
        return [
          {
            sessionUpdate: 'plan',
            entries: e.data.todos.map((t) => ({ content: t.content, status: t.status, priority: 'medium' as const })),
          },
        ];
      default:
        return [];
    }
  }

  private userChunks(m: UserMessage): SessionUpdate[] {
    return acpContent(m.content).map((content) => ({ sessionUpdate: 'user_message_chunk', content, messageId: m.id }));
  }
}
