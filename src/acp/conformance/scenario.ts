/**
 * One of dsh's ACP snapshot scenarios, read from its folder (the layout ../shared/fixtures/dsh-acp
 * describes in its README): the client's script (`input.json`), the recorded session log, the
 * replay override, the expected stdout, the workspace to copy, the hook configurations a project
 * brings. Every file is checked as it is read; a bad one is a `ScenarioError` naming the file and
 * the JSON path (or line).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CodedError } from '../../model/coded-error.js';
import { loadJsonl } from '../../session/codec/load.js';
import type { SessionEvent } from '../../session/events.js';
import type { ApprovalPolicy, SandboxMode } from '../../tools/permissions/modes.js';

export class ScenarioError extends CodedError<'SCENARIO_INVALID'> {
  constructor(
    readonly file: string,
    readonly path: string,
    why: string,
  ) {
    super('SCENARIO_INVALID', `${file}${path ? `: ${path}` : ''}: ${why}`);
    this.name = 'ScenarioError';
  }
}

export type Step =
  | { op: 'initialize' }
  | { op: 'newSession' }
  | { op: 'prompt'; text: string }
  | { op: 'promptExpectError'; text: string }
  | { op: 'promptAndWaitForAgentMessage'; text: string; waitForText: string }
  | { op: 'promptAndCancel'; text: string; waitForFile?: { path: string; timeoutMs?: number } }
  | { op: 'waitForTurnStart'; minimumTurn?: number; timeoutMs?: number }
  | { op: 'waitForTurnEnd'; timeoutMs?: number }
  /** An op this runner does not drive (a dsh feature absent here): the scenario needs it. */
  | { op: 'unsupported'; name: string };

export type PermissionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface Scenario {
  name: string;
  dir: string;
  steps: Step[];
  permissionAnswers: PermissionKind[];
  /** The recorded session log's text (`{{cwd}}` still in it; the runner puts its workspace there). */
  sessionText: string;
  events: readonly SessionEvent[];
  overrideFile?: string;
  expected: Record<string, unknown>[];
  workspace?: string;
  /** A project's Claude Code (`hooks.json`) and Codex (`codex-hooks.json`) hook configurations. */
  hooks: { claudeCode?: string; codex?: string };
  /** The policy the recording ran under (its runtime context says), dsh's snapshot default otherwise. */
  policy: { sandbox: SandboxMode; approval: ApprovalPolicy };
}

const DRIVEN = new Set([
  'initialize',
  'newSession',
  'prompt',
  'promptExpectError',
  'promptAndWaitForAgentMessage',
  'promptAndCancel',
  'waitForTurnStart',
  'waitForTurnEnd',
]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new ScenarioError(file, '', `cannot read: ${(e as Error).message}`);
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readText(file)) as unknown;
  } catch (e) {
    if (e instanceof ScenarioError) throw e;
    throw new ScenarioError(file, '', `not JSON: ${(e as Error).message}`);
  }
}

function parseInput(v: unknown, file: string): { steps: Step[]; permissionAnswers: PermissionKind[] } {
  if (!isRecord(v) || !Array.isArray(v.steps)) throw new ScenarioError(file, '$.steps', 'expected an array of steps');
  const steps = v.steps.map((s: unknown, i: number): Step => {
    const path = `$.steps[${i}]`;
    if (!isRecord(s) || typeof s.op !== 'string') throw new ScenarioError(file, path, 'a step is an object with an op');
    if (!DRIVEN.has(s.op)) return { op: 'unsupported', name: s.op };
    for (const k of ['text', 'waitForText'] as const)
      if (k in s && typeof s[k] !== 'string') throw new ScenarioError(file, `${path}.${k}`, 'expected a string');
    if (s.op.startsWith('prompt') && typeof s.text !== 'string') throw new ScenarioError(file, `${path}.text`, 'expected a string');
    if (s.op === 'promptAndWaitForAgentMessage' && typeof s.waitForText !== 'string')
      throw new ScenarioError(file, `${path}.waitForText`, 'expected a string');
    if (s.waitForFile !== undefined && (!isRecord(s.waitForFile) || typeof s.waitForFile.path !== 'string'))
      throw new ScenarioError(file, `${path}.waitForFile.path`, 'expected a string');
    for (const k of ['minimumTurn', 'timeoutMs'] as const)
      if (k in s && (typeof s[k] !== 'number' || !Number.isSafeInteger(s[k])))
        throw new ScenarioError(file, `${path}.${k}`, 'expected an integer');
    return s as unknown as Step;
  });
  const answers: unknown = v.permissionAnswers ?? [];
  if (!Array.isArray(answers)) throw new ScenarioError(file, '$.permissionAnswers', 'expected an array');
  const permissionAnswers = answers.map((a: unknown, i: number) => {
    const kind = isRecord(a) ? a.kind : undefined;
    if (kind !== 'allow_once' && kind !== 'allow_always' && kind !== 'reject_once' && kind !== 'reject_always')
      throw new ScenarioError(file, `$.permissionAnswers[${i}].kind`, 'expected allow_once, allow_always, reject_once or reject_always');
    return kind;
  });
  return { steps, permissionAnswers };
}

/**
 * The policy the recording ran under, from dsh's own runtime-context text ("Current DSH file
 * policy: X", "Approval prompts are disabled"); dsh's snapshot default (danger-full-access,
 * never) when the log does not say.
 */
export function recordedPolicy(events: readonly SessionEvent[]): { sandbox: SandboxMode; approval: ApprovalPolicy } {
  for (const e of events) {
    if (e.type !== 'user/message' || e.data.source.kind !== 'plugin') continue;
    const text = e.data.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
    const m = /Current DSH file policy: (read-only|workspace-write|danger-full-access)\b/.exec(text);
    if (!m) continue;
    return { sandbox: m[1] as SandboxMode, approval: /Approval prompts are disabled/.test(text) ? 'never' : 'ask' };
  }
  return { sandbox: 'danger-full-access', approval: 'never' };
}

export function loadScenario(given: string, name = given.split('/').filter(Boolean).at(-1) ?? given): Scenario {
  // Absolute: the files are handed to a dsh running in the scenario's scratch workspace.
  const dir = resolve(given);
  const inputFile = join(dir, 'input.json');
  const { steps, permissionAnswers } = parseInput(readJson(inputFile), inputFile);
  const sessionFile = join(dir, 'session.jsonl');
  const sessionText = readText(sessionFile);
  let events: readonly SessionEvent[];
  try {
    events = loadJsonl(sessionText, { placeholders: 'warn' }).session.events;
  } catch (e) {
    throw new ScenarioError(sessionFile, '', (e as Error).message);
  }
  const expectedFile = join(dir, 'stdout.expected.jsonl');
  const expected = readText(expectedFile)
    .split('\n')
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim() !== '')
    .map(({ l, i }) => {
      let v: unknown;
      try {
        v = JSON.parse(l) as unknown;
      } catch (e) {
        throw new ScenarioError(expectedFile, `line ${i + 1}`, `not JSON: ${(e as Error).message}`);
      }
      if (!isRecord(v)) throw new ScenarioError(expectedFile, `line ${i + 1}`, 'expected a JSON-RPC message object');
      return v;
    });
  const ws = join(dir, 'workspace');
  const workspace = existsSync(ws) && statSync(ws).isDirectory() ? ws : undefined;
  const hooks: Scenario['hooks'] = {};
  if (workspace && existsSync(join(workspace, 'hooks.json'))) hooks.claudeCode = join(workspace, 'hooks.json');
  if (workspace && existsSync(join(workspace, 'codex-hooks.json'))) hooks.codex = join(workspace, 'codex-hooks.json');
  const s: Scenario = { name, dir, steps, permissionAnswers, sessionText, events, expected, hooks, policy: recordedPolicy(events) };
  const overrideFile = join(dir, 'replay.override.json');
  if (existsSync(overrideFile)) s.overrideFile = overrideFile;
  if (workspace) s.workspace = workspace;
  return s;
}

/** Scenario folders under `root`: each with an `input.json`, sorted by name. */
export function scenarioDirs(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (e) {
    throw new ScenarioError(root, '', `cannot list: ${(e as Error).message}`);
  }
  return names
    .filter((n) => existsSync(join(root, n, 'input.json')))
    .sort()
    .map((n) => join(root, n));
}
