/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON row per
 * message piece, linked by `uuid`/`parentUuid`. One API response is split over several rows
 * sharing `message.id` (each row one content block, each repeating the usage so far: the last
 * row's usage is the response's). Tool results are `tool_result` blocks in user rows. Rows with
 * `isSidechain: true` are subagent (Task) conversations, interleaved with the main one: each
 * becomes a child session, linked to the Task call whose prompt started it.
 */
import type { ContentBlock } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import { SessionBuilder, toolCall } from './builder.js';
import { arr, count, epochMs, isObj, jsonLines, str, textOf, type Obj, type SourceRecord } from './source.js';
import { LossLedger } from './losses.js';
import type { ForeignFormat, ImportedSession, SourceInput } from './types.js';
import { absoluteCwd, idFromFile } from './common.js';

const ROW_TYPES = new Set(['user', 'assistant', 'summary', 'system']);
const INTERRUPTED = /^\[Request interrupted by user/;

export const claudeCode: ForeignFormat = {
  id: 'claude-code',
  label: 'Claude Code transcript',
  sniffLine: (o) =>
    (typeof o.type === 'string' &&
      (typeof o.sessionId === 'string' || typeof o.leafUuid === 'string') &&
      (ROW_TYPES.has(o.type) || 'uuid' in o || 'leafUuid' in o)) ||
    o.type === 'file-history-snapshot',
  read: readClaudeCode,
};

function readClaudeCode(src: SourceInput): ImportedSession[] {
  const fileLosses = new LossLedger();
  const rows = jsonLines(src.text, fileLosses);
  const main: SourceRecord[] = [];
  const side: SourceRecord[] = [];
  const titles: SourceRecord[] = [];
  for (const r of rows) {
    if (r.value.type === 'summary') titles.push(r);
    else if (r.value.isSidechain === true) side.push(r);
    else main.push(r);
  }
  const first = rows.find((r) => typeof r.value.sessionId === 'string')?.value;
  const sessionId = str(first?.sessionId) ?? str(rows[0]?.value.leafUuid) ?? idFromFile(src.file, 'claude-code-session');

  // Sidechains: grouped by agentId when rows carry one, else by the root of their parentUuid chain.
  const groups = groupSidechains(side);
  const children: ImportedSession[] = [];
  const taskCalls = taskPrompts(main);
  const childLinks: { id: string; callId?: string; label: string; line: number }[] = [];
  groups.forEach((g, i) => {
    const prompt = firstPrompt(g);
    const callId = takeCall(taskCalls, prompt);
    const id = `${sessionId}.${g.agentId !== undefined ? `agent-${g.agentId}` : `sidechain-${i + 1}`}`;
    const label = taskCalls.find((t) => t.callId === callId)?.description ?? (prompt ?? '').slice(0, 80);
    childLinks.push({ id, ...(callId !== undefined ? { callId } : {}), label, line: g.rows[0]!.line });
    const b = mapRows(g.rows, { id, parentSession: sessionId, origin: 'subagent', delegationDepth: 1 }, src, new LossLedger());
    children.push({ ...b.finish(), key: id.slice(sessionId.length + 1), label: `sidechain: ${label}` });
  });

  const b = mapRows(main, { id: sessionId }, src, fileLosses, titles, childLinks);
  const built = b.finish();
  return [{ ...built, key: 'main', label: 'main session' }, ...children];
}

interface Group {
  agentId?: string;
  rows: SourceRecord[];
}

function groupSidechains(side: SourceRecord[]): Group[] {
  const byUuid = new Map<string, SourceRecord>();
  for (const r of side) if (typeof r.value.uuid === 'string') byUuid.set(r.value.uuid, r);
  const rootOf = (r: SourceRecord): string => {
    let cur = r;
    const seen = new Set<SourceRecord>();
    for (;;) {
      if (seen.has(cur)) break; // a cycle in a hostile file: stop where it repeats
      seen.add(cur);
      const p = str(cur.value.parentUuid);
      const parent = p === undefined ? undefined : byUuid.get(p);
      if (parent === undefined) break;
      cur = parent;
    }
    return str(cur.value.uuid) ?? `line-${cur.line}`;
  };
  const groups = new Map<string, Group>();
  for (const r of side) {
    const agentId = str(r.value.agentId);
    const key = agentId !== undefined ? `agent:${agentId}` : `root:${rootOf(r)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ...(agentId !== undefined ? { agentId } : {}), rows: [] }));
    g.rows.push(r);
  }
  return [...groups.values()];
}

function firstPrompt(g: Group): string | undefined {
  for (const r of g.rows) {
    const m = r.value.message;
    if (r.value.type === 'user' && isObj(m)) {
      const t = textOf(m.content);
      if (t !== '') return t;
    }
  }
  return undefined;
}

/** The Task calls of the main conversation: their id, prompt and description, in order. */
function taskPrompts(rows: SourceRecord[]): { callId: string; prompt: string; description?: string; used: boolean }[] {
  const out: { callId: string; prompt: string; description?: string; used: boolean }[] = [];
  for (const r of rows) {
    const m = r.value.message;
    if (r.value.type !== 'assistant' || !isObj(m)) continue;
    for (const b of arr(m.content)) {
      if (!isObj(b) || b.type !== 'tool_use' || !isObj(b.input)) continue;
      const prompt = str(b.input.prompt);
      if (prompt !== undefined && typeof b.id === 'string') {
        const description = str(b.input.description);
        out.push({ callId: b.id, prompt, ...(description !== undefined ? { description } : {}), used: false });
      }
    }
  }
  return out;
}

function takeCall(calls: { callId: string; prompt: string; used: boolean }[], prompt: string | undefined): string | undefined {
  if (prompt === undefined) return undefined;
  const c = calls.find((t) => !t.used && t.prompt.trim() === prompt.trim());
  if (!c) return undefined;
  c.used = true;
  return c.callId;
}

function usageOf(u: unknown, b: SessionBuilder): TokenUsage | undefined {
  if (!isObj(u)) return undefined;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const out: TokenUsage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cr = count(u.cache_read_input_tokens);
  const cw = count(u.cache_creation_input_tokens);
  if (cr !== undefined) out.cacheReadTokens = cr;
  if (cw !== undefined) out.cacheWriteTokens = cw;
  for (const k of Object.keys(u)) {
    if (!['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'].includes(k))
      b.losses.add(`message.usage.${k}`, 'no dsh usage field', b.line);
  }
  return out;
}

function mapRows(
  rows: SourceRecord[],
  head: { id: string; parentSession?: string; origin?: 'subagent'; delegationDepth?: number },
  src: SourceInput,
  losses: LossLedger,
  titles: SourceRecord[] = [],
  children: { id: string; callId?: string; label: string; line: number }[] = [],
): SessionBuilder {
  const firstRow = rows[0]?.value;
  const cwd = absoluteCwd(str(firstRow?.cwd), losses, rows[0]?.line);
  const b = new SessionBuilder(
    {
      ...head,
      ...(cwd !== undefined ? { cwd } : {}),
      ...(epochMs(firstRow?.timestamp) !== undefined ? { createdAt: epochMs(firstRow?.timestamp)! } : {}),
    },
    {
      format: 'claude-code',
      sourceId: str(firstRow?.sessionId),
      tool: 'Claude Code',
      toolVersion: str(firstRow?.version),
      file: src.file,
      gitBranch: str(firstRow?.gitBranch) || undefined,
    },
  );
  for (const l of losses.list()) b.losses.add(l.field, l.why, l.firstLine, l.count);
  for (const t of titles) {
    b.line = t.line;
    const title = str(t.value.summary);
    if (title !== undefined) b.record('session/title', { title });
  }
  const childByCall = new Map(children.filter((c) => c.callId !== undefined).map((c) => [c.callId!, c]));
  const unlinked = children.filter((c) => c.callId === undefined);

  // One API response may span several rows: gathered until a row of another response arrives.
  let response: { id: string | undefined; rows: SourceRecord[] } | undefined;
  const flush = (): void => {
    if (!response) return;
    const rs = response.rows;
    response = undefined;
    emitResponse(b, rs);
  };

  for (const r of rows) {
    const o = r.value;
    b.line = r.line;
    const m = isObj(o.message) ? o.message : undefined;
    if (o.type === 'assistant' && m) {
      const id = str(m.id);
      if (response && (id === undefined || id !== response.id)) flush();
      response ??= { id, rows: [] };
      response.rows.push(r);
      continue;
    }
    flush();
    b.line = r.line;
    const time = epochMs(o.timestamp);
    if (o.type === 'user' && m) {
      mapUser(b, o, m, time, childByCall);
      continue;
    }
    if (o.type === 'system') {
      if (o.subtype === 'compact_boundary') continue; // the summary row that follows carries the compaction
      b.losses.add(
        `system row${typeof o.subtype === 'string' ? ` (${o.subtype})` : ''}`,
        'a notice shown in Claude Code, not model input',
        r.line,
      );
      continue;
    }
    b.losses.add(`row type ${typeof o.type === 'string' ? o.type : '(none)'}`, 'no dsh event for it', r.line);
  }
  flush();
  for (const c of unlinked) {
    b.line = c.line;
    b.child(c.id, { label: c.label });
  }
  return b;
}

function mapUser(
  b: SessionBuilder,
  o: Obj,
  m: Obj,
  time: number | undefined,
  childByCall: Map<string, { id: string; label: string }>,
): void {
  const content = m.content;
  if (o.isCompactSummary === true) {
    b.compact([{ type: 'text', text: textOf(content) }], time !== undefined ? { time } : {});
    return;
  }
  if (o.toolUseResult !== undefined)
    b.losses.add(
      'toolUseResult',
      'structured copy of the tool output for the UI; the model saw the tool_result block, which is kept',
      b.line,
    );
  if (typeof content === 'string') {
    const blocks: ContentBlock[] = [{ type: 'text', text: content }];
    if (o.isMeta === true)
      b.input(
        blocks,
        { kind: 'plugin', plugin: 'claude-code', form: 'notice', summary: 'meta message' },
        { ...(time !== undefined ? { time } : {}) },
      );
    else if (INTERRUPTED.test(content)) {
      b.setTurnReason({ kind: 'aborted', reason: { kind: 'user' } });
      b.input(blocks, { kind: 'user' }, time !== undefined ? { time } : {});
    } else b.prompt(blocks, time !== undefined ? { time } : {});
    return;
  }
  const text: ContentBlock[] = [];
  let results = 0;
  for (const blk of arr(content)) {
    if (!isObj(blk)) continue;
    if (blk.type === 'tool_result' && typeof blk.tool_use_id === 'string') {
      results++;
      const callId = blk.tool_use_id;
      const child = childByCall.get(callId);
      if (child) b.child(child.id, { callId, label: child.label, ...(time !== undefined ? { time } : {}) });
      b.result({ callId, content: resultContent(blk.content, b), isError: blk.is_error === true, ...(time !== undefined ? { time } : {}) });
    } else if (blk.type === 'text' && typeof blk.text === 'string') {
      text.push({ type: 'text', text: blk.text });
    } else {
      b.losses.add(
        `user content block ${String(blk.type)}`,
        blk.type === 'image' ? 'image bytes are not kept in a dsh log' : 'no dsh block for it',
        b.line,
      );
    }
  }
  if (text.length === 0) return;
  const joined = text.map((t) => (t.type === 'text' ? t.text : '')).join('\n');
  if (results > 0 || o.isMeta === true)
    b.input(
      text,
      o.isMeta === true ? { kind: 'plugin', plugin: 'claude-code', form: 'notice', summary: 'meta message' } : { kind: 'user' },
      time !== undefined ? { time } : {},
    );
  else if (INTERRUPTED.test(joined)) {
    b.setTurnReason({ kind: 'aborted', reason: { kind: 'user' } });
    b.input(text, { kind: 'user' }, time !== undefined ? { time } : {});
  } else b.prompt(text, time !== undefined ? { time } : {});
}

function resultContent(c: unknown, b: SessionBuilder): ContentBlock[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  const out: ContentBlock[] = [];
  for (const blk of arr(c)) {
    if (isObj(blk) && blk.type === 'text' && typeof blk.text === 'string') out.push({ type: 'text', text: blk.text });
    else
      b.losses.add(
        `tool_result content block ${isObj(blk) ? String(blk.type) : typeof blk}`,
        'image bytes are not kept in a dsh log',
        b.line,
      );
  }
  return out;
}

function emitResponse(b: SessionBuilder, rows: SourceRecord[]): void {
  const last = rows[rows.length - 1]!;
  const lm = last.value.message as Obj;
  b.line = rows[0]!.line;
  const content: ContentBlock[] = [];
  for (const r of rows) {
    const m = r.value.message as Obj;
    b.line = r.line;
    for (const blk of arr(m.content)) {
      if (!isObj(blk)) continue;
      switch (blk.type) {
        case 'text':
          if (typeof blk.text === 'string') content.push({ type: 'text', text: blk.text });
          break;
        case 'thinking':
          if (typeof blk.thinking === 'string') content.push({ type: 'reasoning', text: blk.thinking });
          if (typeof blk.signature === 'string')
            b.losses.add('thinking.signature', 'provider replay state; not kept for imported sessions', r.line);
          break;
        case 'tool_use':
          content.push(toolCall(str(blk.id) ?? '', str(blk.name) ?? '', blk.input));
          break;
        default:
          b.losses.add(`assistant content block ${String(blk.type)}`, 'no dsh block for it', r.line);
      }
    }
  }
  b.line = last.line;
  const model = str(lm.model) ?? 'unknown';
  const usage = usageOf(lm.usage, b);
  const time = epochMs(rows[0]!.value.timestamp);
  if (last.value.isApiErrorMessage === true || model === '<synthetic>') {
    // A failed request: Claude Code writes it as a synthetic assistant row holding the error
    // text. It is no model response; the text becomes the turn's error.
    const text = content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    b.setTurnReason({ kind: 'error', error: { message: text || 'API error', code: 'UNKNOWN' } });
    return;
  }
  b.assistant({
    content,
    route: { provider: 'anthropic', model },
    ...(usage ? { usage } : {}),
    ...(time !== undefined ? { time } : {}),
    ...(typeof lm.id === 'string' ? { id: lm.id } : {}),
  });
  const stop = str(lm.stop_reason);
  if (stop === 'max_tokens') b.setTurnReason({ kind: 'max-tokens' });
  const withRequestId = rows.filter((r) => typeof r.value.requestId === 'string').length;
  if (withRequestId) b.losses.add('requestId', 'no dsh field for the provider request id of a response', rows[0]!.line, withRequestId);
}
