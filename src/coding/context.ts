/**
 * Runtime context and workspace instructions, put in front of the model the only way anything
 * reaches it: as recorded `user/message` events.
 *
 * - The runtime context (workspace, platform, date, git branch, sandbox and approval policy) is a
 *   `snapshot` from plugin `dsh:runtime-context`, added to a step's entered messages whenever it
 *   differs from the last snapshot in the log (so a resumed session does not repeat it).
 * - Workspace instructions (`AGENTS.md` at the workspace root) are injected once per session, as
 *   `instructions` from plugin `dsh:workspace-instructions`, when the log has none yet.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { readGitBranch } from './git-head.js';
import type { UserMessage } from '../model/message.js';
import type { Session } from '../session/session.js';
import type { Plugin } from '../agent/context.js';

export const RUNTIME_CONTEXT_PLUGIN = 'dsh:runtime-context';
export const INSTRUCTIONS_PLUGIN = 'dsh:workspace-instructions';

export interface ContextSection {
  name: string;
  text: string;
}

/**
 * The branch checked out in `cwd`, as `git rev-parse --abbrev-ref HEAD` prints it (undefined
 * outside a repository or without git). Read from the repository's files when they tell for
 * certain (src/coding/git-head.ts; a spawn is ~8–10 ms of main-thread time, and this runs for every
 * step); otherwise git runs in a child process the event loop does not wait for.
 */
export function gitBranch(cwd: string): Promise<string | undefined> {
  const read = readGitBranch(cwd);
  if (read.known) return Promise.resolve(read.branch);
  return new Promise((resolve) => {
    try {
      execFile('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd, timeout: 2000 }, (err, stdout) =>
        resolve(err ? undefined : stdout.trim() || undefined),
      ).stdin?.end();
    } catch {
      resolve(undefined);
    }
  });
}

/**
 * The runtime-context sections: workspace, platform, date, git branch, then `extra`. `branch` is
 * a branch read already under way (the coding agent starts one when it is created); by default
 * a new one.
 */
export async function defaultContextSections(
  cwd: string,
  extra: ContextSection[] = [],
  now: () => Date = () => new Date(),
  branchRead: Promise<string | undefined> = gitBranch(cwd),
): Promise<ContextSection[]> {
  const sections: ContextSection[] = [
    { name: 'workspace', text: `Workspace (current directory): ${cwd}` },
    { name: 'platform', text: `Platform: ${process.platform} ${process.arch}` },
    { name: 'date', text: `Date: ${now().toISOString().slice(0, 10)}` },
  ];
  const branch = await branchRead;
  if (branch) sections.push({ name: 'git', text: `Git branch: ${branch}` });
  return [...sections, ...extra];
}

function snapshotText(sections: readonly ContextSection[]): string {
  return ['Current runtime context. This snapshot supersedes earlier ones.', '', ...sections.map((s) => s.text)].join('\n');
}

/** The sections of the last runtime-context snapshot recorded in the log, if any. */
export function lastSnapshot(session: Session): ContextSection[] | undefined {
  // Walking back over records (chunk runs stepped over whole), not `at()` per seq.
  const e = session.lastOfType('user/message', (m) => m.data.source.kind === 'plugin' && m.data.source.plugin === RUNTIME_CONTEXT_PLUGIN);
  return e && e.data.source.kind === 'plugin' ? ((e.data.source.sections ?? []) as ContextSection[]) : undefined;
}

/** Adds a runtime-context snapshot to a step's entered messages whenever the context changed. */
export function runtimeContext(sections: () => ContextSection[] | Promise<ContextSection[]>): Plugin {
  return (host) =>
    host.on(
      'agent/pre-step',
      async (p, next) => {
        const decision = await next(p);
        if (decision.kind !== 'enter' || decision.messages.length === 0) return decision;
        const now = await sections();
        const last = lastSnapshot(host.session);
        if (last && JSON.stringify(last) === JSON.stringify(now)) return decision;
        const snapshot: UserMessage = {
          id: randomUUID(),
          role: 'user',
          content: [{ type: 'text', text: snapshotText(now) }],
          source: { kind: 'plugin', plugin: RUNTIME_CONTEXT_PLUGIN, form: 'snapshot', sections: now },
        };
        return { kind: 'enter', messages: [...decision.messages, snapshot] };
      },
      { name: RUNTIME_CONTEXT_PLUGIN },
    );
}

export const INSTRUCTION_FILES = ['AGENTS.md'] as const;

/** Injects the workspace's AGENTS.md once per session (skipped when the log already has it). */
export function workspaceInstructions(cwd: string, maxBytes = 64 * 1024): Plugin {
  return (host) =>
    host.on(
      'agent/session-start',
      ({ agent }) => {
        const given = agent.session.lastOfType(
          'user/message',
          (m) => m.data.source.kind === 'plugin' && m.data.source.plugin === INSTRUCTIONS_PLUGIN,
        );
        if (given) return;
        for (const name of INSTRUCTION_FILES) {
          const file = join(cwd, name);
          if (!existsSync(file)) continue;
          let text = readFileSync(file, 'utf8');
          const truncated = Buffer.byteLength(text) > maxBytes;
          if (truncated) text = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
          agent.inject({
            id: randomUUID(),
            role: 'user',
            content: [
              {
                type: 'text',
                text:
                  `<workspace-instructions file="${name}">\nThese are the workspace's instructions for agents. Follow them where ` +
                  `they apply; the user's own requests take precedence.\n\n${text}` +
                  `${truncated ? `\n[truncated at ${maxBytes} bytes]` : ''}\n</workspace-instructions>`,
              },
            ],
            source: { kind: 'plugin', plugin: INSTRUCTIONS_PLUGIN, form: 'instructions' },
          });
        }
      },
      { name: INSTRUCTIONS_PLUGIN },
    );
}
