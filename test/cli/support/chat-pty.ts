/**
 * `dsh chat` in a real pseudo-terminal against the gated provider (the network edge), for the
 * screen tests: one chat per test, killed with its provider after it.
 */
import { afterEach } from 'vitest';
import { chatStream } from '../../support/faults.js';
import { agentEnv, gitRepo, logEvents, tempDir } from './agent.js';
import { startGatedProvider, type GatedProvider, type GatedResponse } from './gated-provider.js';
import { spawnPtyDsh, type PtyDsh } from './pty.js';

const open: { p: GatedProvider; c: PtyDsh }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.c.kill('SIGKILL');
    await o.p.close();
  }
});

/** An answer streamed in these parts (held after part `holdAfter` until released). */
export const say = (parts: string[], holdAfter?: number): GatedResponse => ({
  sse: chatStream({ text: parts }),
  ...(holdAfter !== undefined ? { holdAfter } : {}),
});

/** The user prompts a log recorded, each message's text blocks joined by `|`. */
export const userTexts = (path: string): string[] =>
  logEvents(path)
    .filter((e) => e.type === 'user/message' && (e.data as { source: { kind: string } }).source.kind === 'user')
    .map((e) => (e.data as { content: { type: string; text: string }[] }).content.map((b) => b.text).join('|'));

export interface ChatOptions {
  args?: string[];
  size?: { cols: number; rows: number };
  env?: Record<string, string>;
  home?: string;
  /** The workspace's files (a git repository); a README by default. */
  files?: Record<string, string>;
  /** An existing workspace instead (another chat's, to share its prompt history). */
  repo?: string;
}

/** A chat on a fresh workspace, once its screen asks for a prompt. */
export async function openChat(script: GatedResponse[], opts: ChatOptions = {}) {
  const p = await startGatedProvider(script);
  const home = opts.home ?? tempDir();
  const repo = opts.repo ?? gitRepo(opts.files);
  const c = spawnPtyDsh(['chat', ...(opts.args ?? []), '--cwd', repo], agentEnv(p.url, home, opts.env), opts.size);
  open.push({ p, c });
  await c.waitFor(/type a prompt/);
  return { p, home, repo, c };
}

/** Polls until `ok()` holds (the screen redraws; a waitFor on the whole buffer can match stale rows). */
export async function until(ok: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
