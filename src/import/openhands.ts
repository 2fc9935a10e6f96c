/**
 * OpenHands: the event stream (`{id, timestamp, source, action | observation, message, args,
 * content, extras, cause, tool_call_metadata}`), as a trajectory (a JSON array of events), as
 * JSON lines (one event per line), or inside evaluation output records (`{instance_id,
 * instruction, history: [events], metrics, error, …}` per line: one session each).
 *
 * An agent action produced by a model call carries `tool_call_metadata.model_response`, the whole
 * LiteLLM completion: its message text and tool calls are the model's response (several actions
 * share one response when the model called tools in parallel), its usage the call's tokens. An
 * observation answers the action whose tool call id it names.
 */
import type { ContentBlock } from '../model/message.js';
import type { ToolSchema } from '../model/request.js';
import type { TokenUsage } from '../model/usage.js';
import { SessionBuilder, toolCall } from './builder.js';
import { idFromFile, openAiUsage } from './common.js';
import { arr, count, epochMs, isObj, jsonLines, num, str, textOf, type Obj } from './source.js';
import { LossLedger } from './losses.js';
import type { ForeignFormat, ImportedSession, SourceInput } from './types.js';

const isEvent = (v: unknown): v is Obj => isObj(v) && typeof v.source === 'string' && ('action' in v || 'observation' in v);
const isRecord = (v: unknown): v is Obj =>
  isObj(v) && Array.isArray(v.history) && ('instance_id' in v || 'metrics' in v || 'instruction' in v);

export const openhands: ForeignFormat = {
  id: 'openhands',
  label: 'OpenHands trajectory or event stream',
  sniffLine: (o) => isEvent(o) || isRecord(o),
  sniffDocument: (d) =>
    (Array.isArray(d) && d.length > 0 && d.every(isEvent)) ||
    isRecord(d) ||
    (isObj(d) && Array.isArray(d.events) && d.events.every(isEvent)),
  read: readOpenHands,
};

function readOpenHands(src: SourceInput, doc?: unknown): ImportedSession[] {
  const losses = new LossLedger();
  if (doc !== undefined) {
    if (Array.isArray(doc))
      return [
        mapEvents(
          doc.map((value, i) => ({ value, line: undefined, index: i })),
          { id: idFromFile(src.file, 'openhands-session') },
          src,
          losses,
          'main',
        ),
      ];
    if (isObj(doc) && Array.isArray(doc.events))
      return [
        mapEvents(
          doc.events.map((value, i) => ({ value, line: undefined, index: i })),
          { id: str(doc.id) ?? idFromFile(src.file, 'openhands-session') },
          src,
          losses,
          'main',
        ),
      ];
    return [mapRecord(doc as Obj, undefined, src, losses)];
  }
  const rows = jsonLines(src.text, losses);
  if (rows.length && isRecord(rows[0]!.value)) {
    return rows
      .map((r, i) => (isRecord(r.value) ? mapRecord(r.value, r.line, src, i === 0 ? losses : new LossLedger(), i) : undefined))
      .filter((s): s is ImportedSession => s !== undefined);
  }
  return [
    mapEvents(
      rows.map((r, i) => ({ value: r.value, line: r.line, index: i })),
      { id: idFromFile(src.file, 'openhands-session') },
      src,
      losses,
      'main',
    ),
  ];
}

/** One evaluation record: its history is the session; metrics give usage per response id. */
function mapRecord(rec: Obj, line: number | undefined, src: SourceInput, losses: LossLedger, index = 0): ImportedSession {
  const id = str(rec.instance_id) ?? `openhands-record-${index + 1}`;
  const metrics = isObj(rec.metrics) ? rec.metrics : {};
  const byResponse = new Map<string, TokenUsage>();
  for (const u of arr(metrics.token_usages)) {
    if (!isObj(u) || typeof u.response_id !== 'string') continue;
    const usage = recordUsage(u);
    if (usage) byResponse.set(u.response_id, usage);
  }
  const meta = isObj(rec.metadata) ? rec.metadata : {};
  const model = isObj(meta.llm_config) ? str(meta.llm_config.model) : undefined;
  const s = mapEvents(
    arr(rec.history).map((value, i) => ({ value, line, index: i })),
    { id },
    src,
    losses,
    index === 0 ? 'main' : id,
    {
      byResponse,
      ...(model !== undefined ? { model } : {}),
      error: str(rec.error),
      finish: (b) => {
        const acc = isObj(metrics.accumulated_token_usage) ? recordUsage(metrics.accumulated_token_usage) : undefined;
        const cost = num(metrics.accumulated_cost);
        if (!b.hasUsage) b.totals({ ...(acc ? { usage: acc } : {}), ...(cost !== undefined ? { costUsd: cost } : {}) });
        else if (cost !== undefined) b.totals({ costUsd: cost });
        for (const k of ['test_result', 'instance', 'metadata', 'instruction'])
          if (rec[k] !== undefined) b.losses.add(`record.${k}`, 'evaluation data, not part of the conversation', line);
        if (arr(metrics.response_latencies).length) b.losses.add('metrics.response_latencies', 'no dsh field for a response latency', line);
      },
    },
  );
  return { ...s, label: `evaluation instance ${id}` };
}

function recordUsage(u: Obj): TokenUsage | undefined {
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const cr = count(u.cache_read_tokens) ?? 0;
  const cw = count(u.cache_write_tokens) ?? 0;
  const out: TokenUsage = { inputTokens: Math.max(0, (prompt ?? 0) - cr - cw), outputTokens: completion ?? 0 };
  if (u.cache_read_tokens !== undefined) out.cacheReadTokens = cr;
  if (u.cache_write_tokens !== undefined) out.cacheWriteTokens = cw;
  return out;
}

interface Extra {
  byResponse?: Map<string, TokenUsage>;
  model?: string;
  error?: string | undefined;
  finish?: (b: SessionBuilder & { hasUsage: boolean }) => void;
}

function mapEvents(
  events: { value: unknown; line: number | undefined; index: number }[],
  head: { id: string },
  src: SourceInput,
  losses: LossLedger,
  key: string,
  extra: Extra = {},
): ImportedSession {
  const first = events.find((e) => isObj(e.value))?.value as Obj | undefined;
  const createdAt = epochMs(first?.timestamp);
  const b = new SessionBuilder(
    { ...head, ...(createdAt !== undefined ? { createdAt } : {}) },
    { format: 'openhands', sourceId: head.id, tool: 'OpenHands', file: src.file },
  ) as SessionBuilder & { hasUsage: boolean };
  b.hasUsage = false;
  for (const l of losses.list()) b.losses.add(l.field, l.why, l.firstLine, l.count);
  if (extra.model) b.setRoute(route(extra.model));
  const emitted = new Set<string>();
  if (events.every((e) => e.line === undefined)) b.records = events.length;

  for (const e of events) {
    b.line = e.line;
    if (!isEvent(e.value)) {
      b.losses.add('history entry that is not an event', 'not read', e.line);
      continue;
    }
    const o = e.value;
    const time = epochMs(o.timestamp);
    const t = time !== undefined ? { time } : {};
    const meta = isObj(o.tool_call_metadata) ? o.tool_call_metadata : undefined;
    const args = isObj(o.args) ? o.args : {};
    if (typeof o.action === 'string') {
      const action = o.action;
      if (action === 'system') {
        b.setSystem(str(args.content) ?? str(o.message), tools(args.tools));
        continue;
      }
      if (o.source === 'user' && action === 'message') {
        const text = str(args.content) ?? str(o.message) ?? '';
        b.prompt([{ type: 'text', text }], t);
        if (arr(args.image_urls).length) b.losses.add('message.image_urls', 'image bytes are not kept in a dsh log', e.line);
        continue;
      }
      if (action === 'recall') {
        b.losses.add('recall action', 'a request for workspace context; its observation is kept', e.line);
        continue;
      }
      if (o.source === 'agent' && meta) {
        const resp = isObj(meta.model_response) ? meta.model_response : undefined;
        const rid = str(resp?.id) ?? `${str(meta.tool_call_id) ?? e.index}`;
        if (emitted.has(rid)) continue; // another action of a response already mapped
        emitted.add(rid);
        const choice = resp ? (arr(resp.choices)[0] as Obj | undefined) : undefined;
        const msg = isObj(choice?.message) ? choice.message : undefined;
        const content: ContentBlock[] = [];
        const reasoning = msg ? str(msg.reasoning_content) : undefined;
        if (reasoning) content.push({ type: 'reasoning', text: reasoning });
        const text = msg ? textOf(msg.content) : '';
        if (text !== '') content.push({ type: 'text', text });
        const calls = msg ? arr(msg.tool_calls) : [];
        if (calls.length) {
          for (const c of calls) {
            if (!isObj(c) || !isObj(c.function)) continue;
            content.push(toolCall(str(c.id) ?? '', str(c.function.name) ?? '', c.function.arguments));
          }
        } else {
          content.push(toolCall(str(meta.tool_call_id) ?? '', str(meta.function_name) ?? action, args));
          if (!resp) b.losses.add('tool_call_metadata without model_response', 'the call is rebuilt from the action arguments', e.line);
        }
        const model = resp ? str(resp.model) : undefined;
        const usage =
          (resp ? openAiUsage(resp.usage) : undefined) ??
          (resp && typeof resp.id === 'string' ? extra.byResponse?.get(resp.id) : undefined);
        if (usage) b.hasUsage = true;
        b.assistant({
          content,
          ...(model ? { route: route(model, extra.model) } : {}),
          ...(usage ? { usage } : {}),
          ...t,
          ...(typeof resp?.id === 'string' ? { id: resp.id } : {}),
        });
        if (action === 'finish') b.endTurn(undefined, time);
        continue;
      }
      if (o.source === 'agent' && action === 'message') {
        b.assistant({ content: [{ type: 'text', text: str(args.content) ?? str(o.message) ?? '' }], ...t });
        continue;
      }
      if (action === 'finish') {
        b.assistant({ content: [{ type: 'text', text: str(args.final_thought) ?? str(o.message) ?? '' }], ...t });
        b.endTurn(undefined, time);
        continue;
      }
      b.losses.add(`action ${action} (source ${String(o.source)})`, 'no model call produced it; no dsh event for it', e.line);
      continue;
    }
    const obs = String(o.observation);
    const callId = meta ? str(meta.tool_call_id) : undefined;
    const content: ContentBlock[] = [{ type: 'text', text: str(o.content) ?? str(o.message) ?? '' }];
    if (callId !== undefined) {
      const exit = isObj(o.extras) && isObj(o.extras.metadata) ? num(o.extras.metadata.exit_code) : undefined;
      b.result({ callId, content, isError: obs === 'error' || o.success === false || (exit !== undefined && exit !== 0), ...t });
      continue;
    }
    if (obs === 'recall') {
      const text = str(o.content) ?? (o.extras !== undefined ? JSON.stringify(o.extras) : (str(o.message) ?? ''));
      b.input([{ type: 'text', text }], { kind: 'plugin', plugin: 'openhands', form: 'recall' }, t);
      continue;
    }
    if (obs === 'error') {
      b.setTurnReason({ kind: 'error', error: { message: str(o.content) ?? str(o.message) ?? 'error', code: 'UNKNOWN' } });
      continue;
    }
    b.losses.add(`observation ${obs}`, 'not an answer to a tool call; no dsh event for it', e.line);
  }
  if (extra.error) b.setTurnReason({ kind: 'error', error: { message: extra.error, code: 'UNKNOWN' } });
  if (extra.error && b.openTurn === undefined) b.losses.add('record.error', 'the run failed after its last turn ended', undefined);
  extra.finish?.(b);
  return { ...b.finish(), key, label: key === 'main' ? 'main session' : key };
}

/** LiteLLM names a model `provider/model` (e.g. `openai/openrouter-llama-4-maverick`). */
function route(model: string, configured?: string): { provider: string; model: string } {
  const named = configured?.endsWith(model) ? configured : model;
  const slash = named.indexOf('/');
  return slash > 0 ? { provider: named.slice(0, slash), model: named.slice(slash + 1) } : { provider: 'litellm', model: named };
}

function tools(v: unknown): ToolSchema[] | undefined {
  const out: ToolSchema[] = [];
  for (const t of arr(v)) {
    const f = isObj(t) && isObj(t.function) ? t.function : undefined;
    if (!f || typeof f.name !== 'string' || f.name === '') continue;
    out.push({
      name: f.name,
      description: str(f.description) ?? '',
      parameters: isObj(f.parameters) ? (f.parameters as ToolSchema['parameters']) : {},
    });
  }
  return out.length ? out : undefined;
}
