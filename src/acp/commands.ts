/**
 * Slash commands an editor offers (`available_commands_update`). A prompt whose text is one runs
 * it instead of a model turn; the reply is an agent message and the prompt ends `end_turn`. Each
 * is recorded in the log: `/compact` as the compaction layer records it, `/status` as
 * `command/run` and `command/done`, as dsh records its commands.
 */
import { randomUUID } from 'node:crypto';
import type { AvailableCommand } from '@agentclientprotocol/sdk/unstable';
import type { Agent } from '../agent/agent.js';
import { runCompactCommand } from '../compaction/command.js';
import { CodedError } from '../model/coded-error.js';
import { addUsage, type TokenUsage } from '../model/usage.js';

export const COMMANDS: readonly AvailableCommand[] = [
  { name: 'compact', description: 'Summarise the older history now, keeping the recent part verbatim' },
  { name: 'status', description: 'Session id, log, turns, token usage and mode' },
  {
    name: 'model',
    description: 'List the models, or use another (provider:model) from the next request on',
    input: { hint: 'provider:model' },
  },
];

export interface CommandHost {
  agent: Agent;
  logPath: string | undefined;
  mode(): string;
  /** The model of the next requests and the ones to offer. */
  models(): Promise<{ current: string; all: string[] } | undefined>;
  /** Switch the model; resolves with the one now used, throws a coded error when it cannot. */
  setModel(ref: string): Promise<string>;
}

/** `/name args` when the text is a known command; otherwise undefined (the text goes to the model). */
export function parseCommand(text: string): { name: string; args: string } | undefined {
  const m = /^\/([a-z][a-z-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m || !COMMANDS.some((c) => c.name === m[1])) return undefined;
  return { name: m[1]!, args: (m[2] ?? '').trim() };
}

function usageOf(agent: Agent): TokenUsage | undefined {
  let u: TokenUsage | undefined;
  for (const e of agent.session.eventsOfType(['assistant/message'])) if (e.data.usage) u = u ? addUsage(u, e.data.usage) : e.data.usage;
  return u;
}

/** Run one command; resolves with the reply for the user. */
export async function runCommand(cmd: { name: string; args: string }, h: CommandHost, signal: AbortSignal): Promise<string> {
  if (cmd.args !== '' && cmd.name !== 'model') return `usage: /${cmd.name} (no arguments)`;
  if (cmd.name === 'compact') return (await runCompactCommand(h.agent, { signal })).text;
  const session = h.agent.session;
  const commandId = randomUUID();
  session.append('command/run', { commandId, name: cmd.name, source: { kind: 'user' } });
  if (cmd.name === 'model') {
    let text: string;
    let ok = true;
    if (cmd.args === '') {
      const m = await h.models();
      text = m ? [`model ${m.current}`, 'configured:', ...m.all.map((x) => `  ${x}`)].join('\n') : 'this session cannot change its model';
    } else {
      try {
        text = `model ${await h.setModel(cmd.args)} from the next request on`;
      } catch (e) {
        if (!(e instanceof CodedError)) throw e;
        ok = false;
        text = `cannot use ${cmd.args}: ${e.message} [${e.code}]`;
      }
    }
    session.append('command/done', { commandId, kind: ok ? 'success' : 'error', text });
    return text;
  }
  const u = usageOf(h.agent);
  const text = [
    `session ${session.id}${session.header.parentSession ? ` (fork of ${session.header.parentSession})` : ''}`,
    `log ${h.logPath ?? 'not persisted'}`,
    `turns ${session.trace.lastTurn}, ${session.length} events`,
    `usage ${u ? `in ${u.inputTokens}, out ${u.outputTokens}, cache read ${u.cacheReadTokens ?? 0}` : 'none yet'}`,
    `mode ${h.mode()}`,
  ].join('\n');
  session.append('command/done', { commandId, kind: 'success', text });
  return text;
}
