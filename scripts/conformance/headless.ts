/**
 * The headless-stream conformance runner: each scenario of a folder in the layout of
 * ../shared/fixtures/dsh-headless runs `dsh run --output-format stream-json` on its prompt
 * (`input.json`, else the expected stream's first prompt) in a copy of its workspace, and every
 * line of `stream-json.expected.jsonl` must appear in our stdout in order, with the same content
 * once generated ids are normalised (match.ts). A scenario that checks the stored log instead
 * (`session.expected.jsonl`) has our stored log compared with it the same way.
 *
 * The model's replies: the recorded log (`session.jsonl`, or `parent.replay.jsonl`); without one,
 * the expected output is itself a recording (its `assistant/chunk` events are what the model
 * streamed), and it is served when it holds a successful model call. When the expected run never
 * reached a model (its only call failed before streaming: a credential refused), dsh is run on
 * its real provider route with no key, as the reference was.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeFailure, matchInOrder, normalize, preview, type NormalizeContext } from '../../src/replay/match.js';
import { missingFeatures } from './sdk.js';
import {
  concreteLog,
  firstPrompt,
  logRecords,
  makeSandbox,
  readJsonLines,
  spawnDsh,
  type LogRecord,
  type ScenarioResult,
  type Sandbox,
} from './scenario.js';

const TIMEOUT_MS = 90_000;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The events of an expected stream or stored log (the header line and result lines left out). */
function expectedEvents(lines: readonly unknown[]): LogRecord[] {
  return lines.flatMap((l) => {
    if (!isRecord(l)) return [];
    if (l.type === 'session_event' && isRecord(l.event)) return [l.event as LogRecord];
    if (typeof l.seq === 'number' && typeof l.type === 'string') return [l as LogRecord];
    return [];
  });
}

/** Did any model call in these events finish without an error? */
function hasSuccessfulCall(events: readonly LogRecord[]): boolean {
  return events.some((e) => e.type === 'assistant/message');
}

function promptOf(dir: string, events: readonly LogRecord[]): string | undefined {
  const input = join(dir, 'input.json');
  if (existsSync(input)) {
    const steps = (JSON.parse(readFileSync(input, 'utf8')) as { steps?: { op?: string; text?: string }[] }).steps ?? [];
    const p = steps.find((s) => s.op === 'prompt' && typeof s.text === 'string');
    if (p) return p.text;
  }
  return firstPrompt(events)?.text;
}

function storedLog(box: Sandbox): string | undefined {
  const root = join(box.home, '.dsh', 'sessions');
  if (!existsSync(root)) return undefined;
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true }))
    if (e.isFile() && e.name === 'session.jsonl') return join(e.parentPath, e.name);
  return undefined;
}

export async function runHeadlessScenario(dir: string): Promise<ScenarioResult> {
  const name = basename(dir);
  const fail = (detail: string[], needs: string[] = []): ScenarioResult => ({ name, pass: false, matched: 0, total: 0, detail, needs });
  const streamFile = join(dir, 'stream-json.expected.jsonl');
  const logFile = join(dir, 'session.expected.jsonl');
  const target = existsSync(streamFile) ? streamFile : existsSync(logFile) ? logFile : undefined;
  if (!target) {
    const files = readdirSync(dir).filter((f) => f.includes('.expected.'));
    return fail(
      [`no stream or stored log to compare (${files.join(', ') || 'no expected files'})`],
      [`the checks of ${files.join(', ')} (outside the stream)`],
    );
  }
  const expectedLines = readJsonLines(target);
  const events = expectedEvents(expectedLines);
  const prompt = promptOf(dir, events);
  if (prompt === undefined) return fail(['no prompt: neither input.json nor the expected output names one']);
  const box = makeSandbox(dir);
  try {
    const needs: string[] = [];
    const recorded = ['session.jsonl', 'parent.replay.jsonl'].map((f) => join(dir, f)).find((f) => existsSync(f));
    // dsh's llm-replay overrides: scripted model calls a log cannot encode, served by --replay-override.
    const override = ['replay.override.json', 'parent.override.json'].map((f) => join(dir, f)).find((f) => existsSync(f));
    const args = ['run', '--output-format', 'stream-json', '--sandbox', 'danger-full-access', '--approval', 'never', '--cwd', box.cwd];
    let model = 'recorded log';
    if (recorded) args.push('--replay-model', concreteLog(recorded, box, 'recorded.jsonl'));
    else if (hasSuccessfulCall(events) || override) {
      // The expected output is itself a recording; an override alone is served over its bare header.
      const served = hasSuccessfulCall(events) ? events : [];
      const file = join(box.root, 'recorded.jsonl');
      const header = { type: 'session', version: 0, id: 'expected', createdAt: 0, cwd: box.cwd, delegationDepth: 0 };
      writeFileSync(file, [header, ...served].map((e) => JSON.stringify(e).split('{{cwd}}').join(box.cwd)).join('\n') + '\n');
      args.push('--replay-model', file);
      model = served.length > 0 ? 'the expected output (no recorded log)' : 'no recorded log';
    } else {
      const config = (events.find((e) => e.type === 'request/header')?.data?.header as { config?: { model?: string } } | undefined)?.config;
      args.push('--model', `deepseek:${config?.model ?? 'deepseek-v4-flash'}`);
      model = 'the real provider route, no key';
    }
    if (override) {
      args.push('--replay-override', override);
      model += ` patched by ${basename(override)}`;
    }
    args.push('-');
    const child = spawnDsh(args, box, TIMEOUT_MS);
    child.send(prompt);
    child.endInput();
    const code = await child.exited;
    const ctx: NormalizeContext = { sessionIds: [], cwd: box.cwd };
    let actual: unknown[];
    if (target === streamFile) {
      actual = child.lines;
      for (const l of actual) if (isRecord(l) && typeof l.sessionId === 'string') ctx.sessionIds = [l.sessionId];
    } else {
      const log = storedLog(box);
      actual = log ? readJsonLines(log) : [];
      const head = actual[0];
      if (isRecord(head) && typeof head.id === 'string') ctx.sessionIds = [head.id];
      actual = actual.slice(1);
    }
    const expected = (target === logFile ? expectedLines.slice(1) : expectedLines).map((v) => normalize(v, ctx));
    const m = matchInOrder(
      expected,
      actual.map((v) => normalize(v, ctx)),
    );
    const detail: string[] = [];
    if (m.failure)
      detail.push(
        ...describeFailure(m.failure),
        `  model: ${model}; dsh run exited ${code}; stderr: ${preview(child.stderr().slice(-300))}`,
      );
    const pass = detail.length === 0;
    const recordedEvents = recorded ? logRecords(recorded) : events;
    return {
      name,
      pass,
      matched: m.matched,
      total: m.total,
      detail,
      needs: pass ? [] : missingFeatures(recordedEvents, expectedLines, actual, needs, m.failure, child.stderr()),
    };
  } finally {
    box.dispose();
  }
}
