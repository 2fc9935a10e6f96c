/**
 * Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`): `{timestamp, type, payload}`
 * rows. `response_item`s are the model-visible history (messages, reasoning, function calls and
 * their outputs); `event_msg`s are the UI's stream, mostly mirroring them, plus `task_started` /
 * `task_complete` / `turn_aborted` (turn boundaries) and `token_count` (cumulative usage after
 * each model call, with that call's own figures in `last_token_usage`); `turn_context` names the
 * model; `compacted` replaces the history.
 *
 * One model call is the run of assistant-side items (reasoning, assistant message, calls) up to
 * the `token_count` that follows it, or the next item of another kind.
 */
import type { ContentBlock } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import { SessionBuilder, toolCall } from './builder.js';
import { absoluteCwd, idFromFile } from './common.js';
import { arr, count, epochMs, isObj, jsonLines, num, str, textOf, type Obj } from './source.js';
import { LossLedger } from './losses.js';
import type { ForeignFormat, ImportedSession, SourceInput } from './types.js';

const ROW_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted']);
const ASSISTANT_ITEMS = new Set(['reasoning', 'function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
/** UI mirrors of response items: no loss when skipped. */
const MIRRORS = new Set(['agent_message', 'agent_reasoning', 'agent_reasoning_raw_content', 'context_compacted', 'user_message']);

export const codex: ForeignFormat = {
  id: 'codex',
  label: 'Codex rollout',
  sniffLine: (o) => typeof o.type === 'string' && ROW_TYPES.has(o.type) && 'payload' in o,
  read: readCodex,
};

interface Pending {
  content: ContentBlock[];
  time: number | undefined;
  line: number;
}

function readCodex(src: SourceInput): ImportedSession[] {
  const losses = new LossLedger();
  const rows = jsonLines(src.text, losses);
  const metaRow = rows.find((r) => r.value.type === 'session_meta');
  const meta = isObj(metaRow?.value.payload) ? metaRow!.value.payload : {};
  const id = str(meta.id) ?? idFromFile(src.file, 'codex-session');
  const cwd = absoluteCwd(str(meta.cwd), losses, metaRow?.line);
  const createdAt = epochMs(meta.timestamp) ?? epochMs(rows[0]?.value.timestamp);
  const b = new SessionBuilder(
    { id, ...(cwd !== undefined ? { cwd } : {}), ...(createdAt !== undefined ? { createdAt } : {}) },
    {
      format: 'codex',
      sourceId: id,
      tool: 'Codex',
      toolVersion: str(meta.cli_version),
      file: src.file,
      originator: str(meta.originator),
      git: isObj(meta.git) ? meta.git : undefined,
    },
  );
  for (const l of losses.list()) b.losses.add(l.field, l.why, l.firstLine, l.count);
  const provider = str(meta.model_provider) ?? 'openai';
  const instructions = isObj(meta.base_instructions) ? str(meta.base_instructions.text) : str(meta.instructions);
  if (instructions !== undefined) b.setSystem(instructions);

  let pending: Pending | undefined;
  let lastTotal: string | undefined;
  let lastResponse: number | undefined;
  /** A user item waits one record: if `event_msg user_message` follows, it was the prompt. */
  let heldUser: { content: ContentBlock[]; time: number | undefined; line: number } | undefined;
  let metaSeen = false;
  let lastWindow: number | undefined;
  const hostedResults: { id: string; status: string; line: number; time: number | undefined }[] = [];

  const flush = (usage?: TokenUsage): void => {
    if (!pending) return;
    const p = pending;
    pending = undefined;
    b.line = p.line;
    lastResponse = b.assistant({ content: p.content, ...(usage ? { usage } : {}), ...(p.time !== undefined ? { time: p.time } : {}) });
    answerHosted();
  };
  const releaseUser = (asPrompt: boolean): void => {
    if (!heldUser) return;
    const h = heldUser;
    heldUser = undefined;
    const saved = b.line;
    b.line = h.line;
    if (asPrompt && b.openTurn === undefined) b.prompt(h.content, h.time !== undefined ? { time: h.time } : {});
    else
      b.input(
        h.content,
        asPrompt ? { kind: 'user' } : { kind: 'plugin', plugin: 'codex', form: 'snapshot', sections: [] },
        h.time !== undefined ? { time: h.time } : {},
      );
    b.line = saved;
  };

  for (const r of rows) {
    const o = r.value;
    b.line = r.line;
    const time = epochMs(o.timestamp);
    const p = isObj(o.payload) ? o.payload : undefined;
    const isUserMessageEvent = o.type === 'event_msg' && p?.type === 'user_message';
    if (!isUserMessageEvent) releaseUser(false);
    switch (o.type) {
      case 'session_meta':
        if (metaSeen) b.losses.add('session_meta (a second one: resumed or forked rollout)', 'the first one names the session', r.line);
        metaSeen = true;
        continue;
      case 'turn_context': {
        if (!p) continue;
        const model = str(p.model);
        if (model !== undefined) b.setRoute({ provider, model, ...(lastWindow !== undefined ? { contextWindow: lastWindow } : {}) });
        for (const k of Object.keys(p))
          if (!['model', 'cwd', 'turn_id'].includes(k)) b.losses.add(`turn_context.${k}`, 'no dsh event for this setting', r.line);
        continue;
      }
      case 'compacted': {
        flush();
        const parts: ContentBlock[] = [];
        const msg = p ? str(p.message) : undefined;
        if (msg) parts.push({ type: 'text', text: msg });
        for (const item of arr(p?.replacement_history)) {
          if (!isObj(item)) continue;
          const text = textOf(item.content);
          if (text !== '') parts.push({ type: 'text', text: item.role === 'assistant' ? `[assistant] ${text}` : text });
          if (item.role !== 'user')
            b.losses.add(
              'compacted.replacement_history role',
              'kept as text of the one checkpoint message (dsh checkpoints are one user message)',
              r.line,
            );
        }
        b.compact(parts.length ? parts : [{ type: 'text', text: '' }], time !== undefined ? { time } : {});
        continue;
      }
      case 'response_item':
        if (p) handleItem(p, r.line, time);
        continue;
      case 'event_msg':
        if (p) handleEvent(p, r.line, time);
        continue;
      default:
        b.losses.add(`row type ${String(o.type)}`, 'no dsh event for it', r.line);
    }
  }
  releaseUser(false);
  flush();
  return [{ ...b.finish(), key: 'main', label: 'main session' }];

  function handleItem(p: Obj, line: number, time: number | undefined): void {
    const t = str(p.type);
    if (t === 'message') {
      const role = str(p.role);
      if (role === 'assistant') {
        pending ??= { content: [], time, line };
        for (const c of arr(p.content)) {
          if (isObj(c) && typeof c.text === 'string') pending.content.push({ type: 'text', text: c.text });
          else b.losses.add('assistant content part', 'not text', line);
        }
        if (p.phase !== undefined) b.losses.add('message.phase', 'no dsh field for it', line);
        return;
      }
      flush();
      const content: ContentBlock[] = [];
      for (const c of arr(p.content)) {
        if (isObj(c) && typeof c.text === 'string') content.push({ type: 'text', text: c.text });
        else
          b.losses.add(
            `${role ?? 'user'} content part ${isObj(c) ? String(c.type) : typeof c}`,
            'image bytes are not kept in a dsh log',
            line,
          );
      }
      if (content.length === 0) return;
      if (role === 'user') heldUser = { content, time, line };
      else
        b.input(
          content,
          { kind: 'plugin', plugin: 'codex', form: 'instructions', role: role ?? 'developer' },
          time !== undefined ? { time } : {},
        );
      return;
    }
    if (t !== undefined && ASSISTANT_ITEMS.has(t)) {
      pending ??= { content: [], time, line };
      if (t === 'reasoning') {
        const summary = arr(p.summary)
          .map((s) => (isObj(s) ? (str(s.text) ?? '') : ''))
          .filter((s) => s !== '');
        const raw = arr(p.content)
          .map((s) => (isObj(s) ? (str(s.text) ?? '') : ''))
          .filter((s) => s !== '');
        const text = [...summary, ...raw].join('\n\n');
        if (text !== '') pending.content.push({ type: 'reasoning', text });
        if (typeof p.encrypted_content === 'string')
          b.losses.add('reasoning.encrypted_content', 'provider replay state; not kept for imported sessions', line);
      } else if (t === 'function_call') {
        pending.content.push(toolCall(str(p.call_id) ?? '', str(p.name) ?? '', p.arguments));
      } else if (t === 'custom_tool_call') {
        pending.content.push(toolCall(str(p.call_id) ?? '', str(p.name) ?? '', str(p.input) ?? ''));
      } else if (t === 'local_shell_call') {
        pending.content.push(toolCall(str(p.call_id) ?? str(p.id) ?? '', 'local_shell', p.action));
      } else {
        // A hosted web search: Codex records the query and a status, never a result.
        const id = str(p.id) ?? `web_search-${line}`;
        pending.content.push(toolCall(id, 'web_search', p.action ?? {}));
        hostedResults.push({ id, status: str(p.status) ?? 'unknown', line, time });
      }
      return;
    }
    if (t === 'function_call_output' || t === 'custom_tool_call_output' || t === 'local_shell_call_output') {
      flush();
      const callId = str(p.call_id) ?? '';
      const out = p.output;
      let content: ContentBlock[];
      let isError = false;
      if (typeof out === 'string') content = [{ type: 'text', text: out }];
      else if (isObj(out)) {
        content = [{ type: 'text', text: str(out.content) ?? JSON.stringify(out) }];
        if (out.success === false) isError = true;
      } else content = [{ type: 'text', text: textOf(out) }];
      b.result({ callId, content, isError, ...(time !== undefined ? { time } : {}) });
      return;
    }
    flush();
    b.losses.add(`response_item ${t ?? '(no type)'}`, 'no dsh event for it', line);
  }

  function handleEvent(p: Obj, line: number, time: number | undefined): void {
    const t = str(p.type);
    switch (t) {
      case 'task_started': {
        flush();
        b.beginTurn(time);
        const window = num(p.model_context_window);
        if (window !== undefined) lastWindow = window;
        return;
      }
      case 'task_complete':
        flush();
        b.endTurn(undefined, time);
        return;
      case 'turn_aborted':
        flush();
        b.endTurn({ kind: 'aborted', reason: p.reason === 'interrupted' ? { kind: 'user' } : { kind: 'legacy' } }, time);
        return;
      case 'error':
        b.setTurnReason({ kind: 'error', error: { message: str(p.message) ?? 'error', code: 'UNKNOWN' } });
        return;
      case 'user_message':
        if (heldUser) releaseUser(true);
        else {
          // No response item carried it (an older rollout): the event is the prompt.
          const text = str(p.message);
          if (text !== undefined && text !== '') {
            if (b.openTurn === undefined) b.prompt([{ type: 'text', text }], time !== undefined ? { time } : {});
            else b.input([{ type: 'text', text }], { kind: 'user' }, time !== undefined ? { time } : {});
          }
        }
        return;
      case 'token_count': {
        const info = isObj(p.info) ? p.info : undefined;
        if (p.rate_limits !== undefined && p.rate_limits !== null)
          b.losses.add('token_count.rate_limits', 'no dsh event for rate-limit state', line);
        if (!info) return;
        const total = JSON.stringify(info.total_token_usage ?? null);
        if (total === lastTotal) return; // a repeated snapshot: no new model call
        lastTotal = total;
        const usage = codexUsage(info.last_token_usage);
        if (!usage) return;
        if (pending) flush(usage);
        else if (lastResponse === undefined || !b.attachUsage(lastResponse, usage))
          b.losses.add('token_count without a response', 'no model response to attach it to', line);
        return;
      }
      default:
        if (t !== undefined && MIRRORS.has(t)) return;
        b.losses.add(`event_msg ${t ?? '(no type)'}`, 'a UI event; no dsh event for it', line);
    }
  }

  /** Hosted calls (web search) of the last response get their recorded status as the result. */
  function answerHosted(): void {
    for (const h of hostedResults.splice(0)) {
      if (!b.awaits(h.id)) continue;
      const saved = b.line;
      b.line = h.line;
      b.result({
        callId: h.id,
        content: [{ type: 'text', text: `status: ${h.status} (Codex records no result for a hosted search)` }],
        ...(h.time !== undefined ? { time: h.time } : {}),
      });
      b.line = saved;
    }
  }
}

function codexUsage(u: unknown): TokenUsage | undefined {
  if (!isObj(u)) return undefined;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const cached = count(u.cached_input_tokens);
  const reasoning = count(u.reasoning_output_tokens);
  const out: TokenUsage = { inputTokens: Math.max(0, (input ?? 0) - (cached ?? 0)), outputTokens: output ?? 0 };
  if (cached !== undefined) out.cacheReadTokens = cached;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}
