/**
 * pi coding-agent sessions (`~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl`): a `session` header
 * row, then `message` rows holding pi-ai messages (`user`, `assistant` with text / thinking /
 * toolCall blocks, per-message usage and $ cost and a stop reason; `toolResult` by
 * `toolCallId`; `bashExecution`, a command the user ran whose output the model reads),
 * `model_change`, `thinking_level_change`, and `compaction` (a summary that replaces every
 * entry before `firstKeptEntryIndex`, an index of the file's rows).
 */
import type { ContentBlock } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import type { LlmFailure } from '../model/failure.js';
import { SessionBuilder, toolCall } from './builder.js';
import { absoluteCwd, idFromFile } from './common.js';
import { arr, count, epochMs, isObj, jsonLines, num, str, type Obj } from './source.js';
import { LossLedger } from './losses.js';
import type { ForeignFormat, ImportedSession, SourceInput } from './types.js';

export const pi: ForeignFormat = {
  id: 'pi',
  label: 'pi session',
  // A dsh header is also `type: "session"`, but with a numeric createdAt and no timestamp text.
  sniffLine: (o) => o.type === 'session' && typeof o.timestamp === 'string' && !('createdAt' in o),
  read: readPi,
};

function readPi(src: SourceInput): ImportedSession[] {
  const losses = new LossLedger();
  const rows = jsonLines(src.text, losses);
  const h = rows.find((r) => r.value.type === 'session')?.value ?? {};
  const id = str(h.id) ?? idFromFile(src.file, 'pi-session');
  const cwd = absoluteCwd(str(h.cwd), losses, 1);
  const createdAt = epochMs(h.timestamp);
  const b = new SessionBuilder(
    { id, ...(cwd !== undefined ? { cwd } : {}), ...(createdAt !== undefined ? { createdAt } : {}) },
    {
      format: 'pi',
      sourceId: id,
      tool: 'pi',
      toolVersion: typeof h.version === 'number' ? String(h.version) : undefined,
      file: src.file,
      branchedFrom: str(h.branchedFrom),
    },
  );
  for (const l of losses.list()) b.losses.add(l.field, l.why, l.firstLine, l.count);
  const provider = str(h.provider);
  const model = str(h.modelId);
  if (provider && model) b.setRoute({ provider, model });
  if (h.thinkingLevel !== undefined) b.losses.add('thinkingLevel', 'no dsh event for a thinking level', 1);

  for (const r of rows) {
    const o = r.value;
    b.line = r.line;
    const time = epochMs(o.timestamp);
    switch (o.type) {
      case 'session':
        continue;
      case 'model_change': {
        const p = str(o.provider);
        const m = str(o.modelId);
        if (p && m) b.setRoute({ provider: p, model: m });
        continue;
      }
      case 'thinking_level_change':
        b.losses.add('thinking_level_change', 'no dsh event for a thinking level', r.line);
        continue;
      case 'compaction': {
        const keep = num(o.firstKeptEntryIndex);
        const tokensBefore = count(o.tokensBefore);
        // Rows are 0-based including the header; lines are 1-based.
        const keepFrom = keep === undefined ? undefined : b.firstSeqFromLine(keep + 1);
        b.compact([{ type: 'text', text: str(o.summary) ?? '' }], {
          ...(time !== undefined ? { time } : {}),
          ...(keepFrom !== undefined ? { keepFrom } : {}),
          ...(tokensBefore !== undefined ? { tokensBefore } : {}),
        });
        continue;
      }
      case 'message':
        if (isObj(o.message)) message(b, o.message, time);
        else b.losses.add('message row without a message', 'not read', r.line);
        continue;
      default:
        b.losses.add(`row type ${String(o.type)}`, 'no dsh event for it', r.line);
    }
  }
  return [{ ...b.finish(), key: 'main', label: 'main session' }];
}

function blocks(content: unknown, b: SessionBuilder, where: string): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const out: ContentBlock[] = [];
  for (const c of arr(content)) {
    if (isObj(c) && c.type === 'text' && typeof c.text === 'string') out.push({ type: 'text', text: c.text });
    else
      b.losses.add(
        `${where} block ${isObj(c) ? String(c.type) : typeof c}`,
        isObj(c) && c.type === 'image' ? 'image bytes are not kept in a dsh log' : 'no dsh block for it',
        b.line,
      );
  }
  return out;
}

function message(b: SessionBuilder, m: Obj, rowTime: number | undefined): void {
  const time = epochMs(m.timestamp) ?? rowTime;
  const t = time !== undefined ? { time } : {};
  switch (m.role) {
    case 'user':
      b.prompt(blocks(m.content, b, 'user'), t);
      return;
    case 'assistant': {
      const content: ContentBlock[] = [];
      for (const c of arr(m.content)) {
        if (!isObj(c)) continue;
        if (c.type === 'text' && typeof c.text === 'string') content.push({ type: 'text', text: c.text });
        else if (c.type === 'thinking' && typeof c.thinking === 'string') {
          content.push({ type: 'reasoning', text: c.thinking });
          if (c.thinkingSignature !== undefined)
            b.losses.add('thinking.thinkingSignature', 'provider replay state; not kept for imported sessions', b.line);
        } else if (c.type === 'toolCall') content.push(toolCall(str(c.id) ?? '', str(c.name) ?? '', c.arguments));
        else b.losses.add(`assistant block ${String(c.type)}`, 'no dsh block for it', b.line);
      }
      const u = isObj(m.usage) ? m.usage : undefined;
      const usage = piUsage(u);
      const cost = u && isObj(u.cost) ? num(u.cost.total) : undefined;
      const provider = str(m.provider);
      const model = str(m.model);
      const stop = str(m.stopReason);
      if (m.api !== undefined)
        b.losses.add('assistant.api', 'the wire API name has no dsh field (the provider and model are kept)', b.line);
      b.assistant({
        content,
        ...(provider && model ? { route: { provider, model } } : {}),
        ...(usage ? { usage } : {}),
        ...(cost !== undefined ? { costUsd: cost } : {}),
        ...(stop === 'aborted' ? { interrupted: true } : {}),
        ...t,
      });
      if (stop === 'aborted') b.setTurnReason({ kind: 'aborted', reason: { kind: 'user' } });
      else if (stop === 'error') b.setTurnReason({ kind: 'error', error: failure(str(m.errorMessage)) });
      else if (stop === 'length') b.setTurnReason({ kind: 'max-tokens' });
      return;
    }
    case 'toolResult': {
      if (m.details !== undefined)
        b.losses.add('toolResult.details', 'structured copy of the output for the UI; the model saw the content, which is kept', b.line);
      b.result({ callId: str(m.toolCallId) ?? '', content: blocks(m.content, b, 'toolResult'), isError: m.isError === true, ...t });
      return;
    }
    case 'bashExecution': {
      // The user ran a command with `!`; pi hands the model its output as a user message.
      const exit = num(m.exitCode);
      const text =
        `Ran \`${str(m.command) ?? ''}\`\n${str(m.output) ?? ''}${m.cancelled === true ? '\n(cancelled)' : ''}` +
        `${exit !== undefined && exit !== 0 ? `\n(exit code ${exit})` : ''}`;
      b.input(
        [{ type: 'text', text }],
        { kind: 'plugin', plugin: 'pi', form: 'notice', summary: 'bash execution', command: str(m.command) ?? '' },
        t,
      );
      if (m.fullOutputPath !== undefined) b.losses.add('bashExecution.fullOutputPath', 'a file outside the log', b.line);
      return;
    }
    default:
      b.losses.add(`message role ${String(m.role)}`, 'no dsh event for it', b.line);
  }
}

/** pi-ai keeps usage disjoint, as dsh does: `input` excludes cache reads and writes. */
function piUsage(u: Obj | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const input = count(u.input);
  const output = count(u.output);
  if (input === undefined && output === undefined) return undefined;
  const out: TokenUsage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cr = count(u.cacheRead);
  const cw = count(u.cacheWrite);
  if (cr !== undefined) out.cacheReadTokens = cr;
  if (cw !== undefined) out.cacheWriteTokens = cw;
  return out;
}

/** A provider error as pi recorded it ("400 {…}" or plain text): the HTTP status when it leads. */
function failure(message: string | undefined): LlmFailure {
  const text = message ?? 'error';
  const status = /^(\d{3})\b/.exec(text);
  const code = text === 'Request was aborted' ? 'ABORTED' : status ? statusCode(Number(status[1])) : 'UNKNOWN';
  return { message: text, code, ...(status ? { status: Number(status[1]) } : {}) };
}

function statusCode(s: number): string {
  if (s === 401 || s === 403) return 'AUTH';
  if (s === 429) return 'RATE_LIMIT';
  if (s === 400 || s === 404 || s === 422) return 'INVALID_REQUEST';
  if (s >= 500) return 'SERVER';
  return 'UNKNOWN';
}
