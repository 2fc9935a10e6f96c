/** Shared set-up for the tools tests: a temporary workspace and a way to run one tool call. */
import { existsSync, mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { Agent, Plugin } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { runToolCall, type ApprovalHandler } from '../../src/tools/pipeline.js';
import type { ToolCallOutcome } from '../../src/tools/types.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory under the OS tmpdir, removed after the test. */
export function tempDir(prefix = 'dsh-tools-', base = tmpdir()): string {
  const d = realpathSync(mkdtempSync(join(base, prefix)));
  made.push(d);
  return d;
}

/**
 * A directory outside the workspace *and* outside /tmp: inside the bubblewrap sandbox /tmp is a
 * private tmpfs, so a /tmp path would be invisible there rather than read-only.
 */
export function outsideDir(): string {
  return tempDir('dsh-outside-', existsSync('/var/tmp') ? '/var/tmp' : homedir());
}

/** Write files (path → content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
}

export function agentFor(cwd: string, plugins: Plugin[], opts: { approve?: ApprovalHandler; adapter?: ScriptedAdapter } = {}): Agent {
  const agent = createAgent({
    model: 'scripted:test',
    cwd,
    adapters: opts.adapter ?? new ScriptedAdapter([]),
    plugins,
    retry: false,
    ...(opts.approve ? { approve: opts.approve } : {}),
  });
  return agent;
}

let n = 0;
/** Run one call through the real pipeline, outside a turn. */
export function call(
  agent: Agent,
  name: string,
  args: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolCallOutcome> {
  return runToolCall(
    { callId: `t${++n}`, name, rawArguments: typeof args === 'string' ? args : JSON.stringify(args), turn: 1, step: 1 },
    signal,
    { registry: agent.tools, bus: agent.bus, session: agent.session, cwd: agent.options.cwd, approve: (r, s) => agent.approve(r, s) },
  );
}

export function text(o: ToolCallOutcome): string {
  return o.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('');
}
