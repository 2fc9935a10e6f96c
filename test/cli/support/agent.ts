/**
 * Fixtures for the agent commands: a scratch git repository holding a typo, a private DSH_HOME,
 * scripted provider answers in DeepSeek's wire format, and reading back what the store wrote.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { loadJsonl, type SessionEvent } from '../../../src/session/index.js';
import type { FakeResponse } from '../../support/fake-provider.js';
import { chatStream } from '../../support/faults.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory (symlinks resolved, as the CLI records workspaces), removed after the file's tests. */
export function tempDir(prefix = 'dsh-cli-agent-'): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(d);
  return d;
}

export const TYPO_README = '# demo\n\nA tiny command-line tool.\n\nPass --quiet to recieve only errors.\n';
export const FIXED_README = TYPO_README.replace('recieve', 'receive');

/** A git repository with these files committed. */
export function gitRepo(files: Record<string, string> = { 'README.md': TYPO_README }): string {
  const dir = tempDir('dsh-cli-repo-');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return dir;
}

/** Environment for an agent command against a fake provider, with its own DSH_HOME. */
export function agentEnv(url: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  // DSH_MODEL empty: a developer's own model choice must not leak into a spawned run.
  return { DEEPSEEK_BASE_URL: url, DEEPSEEK_API_KEY: 'test', DSH_HOME: home, DSH_MODEL: '', NO_COLOR: '1', ...extra };
}

export function text(parts: string[], usage?: { input: number; output: number }): FakeResponse {
  return { sse: chatStream({ text: parts, ...(usage ? { usage } : {}) }) };
}

/** One tool call, its JSON arguments streamed in two pieces. */
export function call(
  id: string,
  name: string,
  args: Record<string, unknown>,
  opts: { reasoning?: string[]; text?: string[] } = {},
): FakeResponse {
  const json = JSON.stringify(args);
  const cut = Math.ceil(json.length / 2);
  return { sse: chatStream({ ...opts, toolCalls: [{ id, name, args: [json.slice(0, cut), json.slice(cut)] }] }) };
}

export const ANSWER = ['Fixed the typo in README.md', ': "recieve" is now', ' "receive".'];

/** grep for the typo, read the file, edit it, then answer: what a model does for "fix the typo". */
export function typoFixScript(): FakeResponse[] {
  return [
    call('call_grep', 'grep', { pattern: 'recieve', path: '.' }, { reasoning: ['Search for', ' the misspelling.'] }),
    call('call_read', 'read', { file_path: 'README.md' }),
    call('call_edit', 'edit', { file_path: 'README.md', old_string: 'to recieve only', new_string: 'to receive only' }),
    text(ANSWER, { input: 120, output: 14 }),
  ];
}

/** Every stored log under a DSH_HOME. */
export function storedLogs(home: string): string[] {
  const root = join(home, 'sessions');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  // Directories only: the root also holds the listing cache (listing-cache.json).
  for (const project of readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name))
    for (const id of readdirSync(join(root, project)))
      if (existsSync(join(root, project, id, 'session.jsonl'))) out.push(join(root, project, id, 'session.jsonl'));
  return out;
}

/** The events the file holds (not the end-of-seed marker the loader adds). */
export function logEvents(path: string): readonly SessionEvent[] {
  const loaded = loadJsonl(readFileSync(path, 'utf8'), { file: path });
  return loaded.session.events.slice(0, loaded.eventCount);
}

export function turnEnds(events: readonly SessionEvent[]): SessionEvent<'turn/end'>[] {
  return events.filter((e): e is SessionEvent<'turn/end'> => e.type === 'turn/end');
}

/** The path the closing line names (`… · log <path> · …`). */
export function logPathFrom(stderr: string): string {
  const m = /· log (\S+session\.jsonl) ·/.exec(stderr);
  if (!m) throw new Error(`no log path in:\n${stderr}`);
  return m[1]!;
}
