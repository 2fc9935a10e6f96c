/**
 * The SDK protocol conformance runner: each scenario of a folder in the layout of
 * ../shared/fixtures/dsh-jsonrpc (`session.jsonl` recorded by dsh's SDK runtime, with
 * `notifications.expected.jsonl` and `result.expected.json`) is driven through `dsh sdk` as a
 * client of dsh's would drive it: `initialize` with the recording's workspace and model,
 * `session/prompt` with the recorded prompt under the recorded session id, wait for the session
 * to go idle, `shutdown`. The model's replies are the recording's, the tools run for real in a
 * copy of the workspace. Every expected notification must appear in ours, in order, with the same
 * content once generated ids are normalised (match.ts); the run's result (`sessionId`, and
 * `finalResponse`: the last assistant message's text) must equal the expected one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeFailure, matchInOrder, normalize, preview, type MatchFailure, type NormalizeContext } from '../../src/replay/match.js';
import {
  calledTools,
  concreteLog,
  firstPrompt,
  logRecords,
  makeSandbox,
  readJsonLines,
  spawnDsh,
  type LogRecord,
  type ScenarioResult,
} from './scenario.js';

const TIMEOUT_MS = 60_000;

type Msg = Record<string, unknown> & { method?: string; id?: unknown; params?: Record<string, unknown> };

function isMsg(v: unknown): v is Msg {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The text of the last assistant message with text among the notifications. */
export function finalResponse(notifications: readonly Msg[]): string {
  let last = '';
  for (const n of notifications) {
    const e = n.params?.event as LogRecord | undefined;
    if (n.method !== 'session.event' || e?.type !== 'assistant/message') continue;
    const content = ((e.data?.message as { content?: { type: string; text?: string }[] } | undefined)?.content ?? []) as {
      type: string;
      text?: string;
    }[];
    const text = content
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('');
    if (text.trim() !== '') last = text;
  }
  return last;
}

/** The message an expected one is: its event type, else its method or type. */
function what(m: unknown): string {
  if (!isMsg(m)) return 'message';
  const ev = (m.params?.event ?? m.event ?? (typeof m.seq === 'number' ? m : undefined)) as LogRecord | undefined;
  if (ev && typeof ev.type === 'string') return `${ev.type} event`;
  return `${typeof m.method === 'string' ? m.method : typeof m.type === 'string' ? m.type : 'response'} message`;
}

/**
 * What our stream shows we lack, for a failing scenario: tools the recording calls, event types
 * we never wrote, and the message the match stopped at (what dsh writes there that we do not).
 */
export function missingFeatures(
  recorded: readonly LogRecord[],
  expected: readonly unknown[],
  ours: readonly unknown[],
  extraFiles: readonly string[],
  failure?: MatchFailure,
  stderr = '',
): string[] {
  const stop = failure
    ? failure.nearest
      ? [`the ${what(failure.expected)} as dsh writes it (differs at ${failure.nearest.difference.path})`]
      : [`the ${what(failure.expected)} dsh sends there (we send none after the previous match)`]
    : [];
  const ourTools = new Set<string>();
  const ourTypes = new Set<string>();
  const eventOf = (m: unknown): LogRecord | undefined => {
    if (!isMsg(m)) return undefined;
    // A notification's event, a stream line's event, or a stored log's record itself.
    const ev = (m.params?.event ?? m.event ?? (typeof m.seq === 'number' ? m : undefined)) as LogRecord | undefined;
    return ev && typeof ev.type === 'string' ? ev : undefined;
  };
  for (const m of ours) {
    const ev = eventOf(m);
    if (!ev) continue;
    ourTypes.add(ev.type);
    if (ev.type === 'request/header') {
      const tools = (ev.data?.header as { tools?: { name?: string }[] } | undefined)?.tools ?? [];
      for (const t of tools) if (typeof t.name === 'string') ourTools.add(t.name);
    }
  }
  if (ourTypes.size === 0) {
    // The CLI ends a refusal with its code in brackets: name it.
    const code = /\[([A-Z][A-Z0-9_]+)\]\s*$/.exec(stderr.trim())?.[1];
    const why = code ? `dsh stopped before the session, ${code}, where the reference recorded the run` : 'dsh wrote no event';
    return [`the run to start (${why})`, ...extraFiles];
  }
  const needs: string[] = [];
  const lacking = calledTools(recorded).filter((t) => !ourTools.has(t));
  if (lacking.length > 0)
    needs.push(
      `tool${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')} ` +
        `(the recording calls ${lacking.length > 1 ? 'them' : 'it'}; dsh here has no such tool)`,
    );
  const types = new Set<string>();
  for (const m of expected) {
    const ev = eventOf(m);
    if (ev && !ourTypes.has(ev.type)) types.add(ev.type);
  }
  if (types.size > 0) needs.push(`event${types.size > 1 ? 's' : ''} ${[...types].join(', ')} (never written here)`);
  for (const f of extraFiles) needs.push(f);
  // The stop point last: with a missing tool or event above, it is usually their consequence.
  return [...needs, ...stop];
}

/**
 * The agent preset a recording was made under. dsh records it only in the session header when
 * it is not the default, and its snapshot scenarios choose it in their composition instead, so
 * it is read from the tools called: `str_replace_editor` exists only in dsh's `minimal` preset.
 */
export function presetFlags(records: readonly LogRecord[]): string[] {
  const header = records[0] as { agentPreset?: unknown } | undefined;
  const named = typeof header?.agentPreset === 'string' ? header.agentPreset : undefined;
  if (named === 'minimal' || (named === undefined && calledTools(records).includes('str_replace_editor')))
    return ['--agent-preset', 'minimal'];
  return [];
}

export async function runSdkScenario(dir: string): Promise<ScenarioResult> {
  const name = basename(dir);
  const fail = (detail: string[], needs: string[] = []): ScenarioResult => ({ name, pass: false, matched: 0, total: 0, detail, needs });
  const logFile = join(dir, 'session.jsonl');
  const expectedFile = join(dir, 'notifications.expected.jsonl');
  if (!existsSync(expectedFile)) return fail(['no notifications.expected.jsonl']);
  if (!existsSync(logFile)) return fail(['no session.jsonl: no recorded model stream to serve']);
  const box = makeSandbox(dir);
  try {
    const rec = concreteLog(logFile, box, 'recorded.jsonl');
    const records = logRecords(rec);
    const header = records[0] as { id?: string } & LogRecord;
    const prompt = firstPrompt(records);
    const config = (records.find((r) => r.type === 'request/header')?.data?.header as { config?: { provider?: string; model?: string } })
      ?.config;
    if (!prompt || typeof header.id !== 'string' || !config?.provider || !config.model)
      return fail(['the recording has no session id, prompt or request header to drive the run with']);
    const sessionId = header.id;
    const child = spawnDsh(
      ['sdk', '--replay-model', rec, '--sandbox', 'danger-full-access', '--approval', 'never', ...presetFlags(records)],
      box,
      TIMEOUT_MS,
    );
    let runError: string | undefined;
    try {
      child.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { cwd: box.cwd, provider: config.provider, model: config.model },
        }),
      );
      const init = (await child.waitFor((v) => isMsg(v) && v.id === 1, 'the initialize response')) as Msg;
      if ('error' in init) throw new Error(`initialize failed: ${preview(init.error)}`);
      child.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, contentBlocks: prompt.content } }));
      const answer = (await child.waitFor((v) => isMsg(v) && v.id === 2, 'the session/prompt response')) as Msg;
      if ('error' in answer) throw new Error(`session/prompt failed: ${preview(answer.error)}`);
      await child.waitFor(
        (v) => isMsg(v) && v.method === 'session.status' && v.params?.sessionId === sessionId && v.params?.status === 'idle',
        'the session going idle',
      );
      child.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'shutdown' }));
      await child.waitFor((v) => isMsg(v) && v.id === 3, 'the shutdown response');
      child.endInput();
    } catch (e) {
      runError = (e as Error).message;
      child.kill();
    }
    const code = await child.exited;
    const ours = child.lines.filter(isMsg);
    const notifications = ours.filter((m) => typeof m.method === 'string').map(({ jsonrpc: _j, ...rest }) => rest as Msg);
    const ctx: NormalizeContext = { sessionIds: [sessionId], cwd: box.cwd };
    const expected = readJsonLines(expectedFile).map((v) => normalize(v, ctx));
    const actual = notifications.map((v) => normalize(v, ctx));
    const m = matchInOrder(expected, actual);
    const detail: string[] = [];
    if (runError) detail.push(`run: ${runError}`);
    if (code !== 0 && !runError) detail.push(`dsh sdk exited ${code}; stderr: ${preview(child.stderr().slice(-400))}`);
    if (m.failure) detail.push(...describeFailure(m.failure));
    const resultFile = join(dir, 'result.expected.json');
    if (existsSync(resultFile)) {
      const want = normalize(JSON.parse(readFileSync(resultFile, 'utf8')), ctx);
      const got = normalize({ sessionId, finalResponse: finalResponse(notifications) }, ctx);
      if (JSON.stringify(want) !== JSON.stringify(got)) detail.push(`result: expected ${preview(want)}, got ${preview(got)}`);
    }
    const children = ['session.1.jsonl', 'session.2.jsonl'].filter((f) => existsSync(join(dir, f)));
    const extra = children.length > 0 ? [`child sessions (${children.join(', ')}: subagents run in-process)`] : [];
    const pass = detail.length === 0;
    return {
      name,
      pass,
      matched: m.matched,
      total: m.total,
      detail,
      needs: pass ? [] : missingFeatures(records, readJsonLines(expectedFile), notifications, extra, m.failure),
    };
  } finally {
    box.dispose();
  }
}
