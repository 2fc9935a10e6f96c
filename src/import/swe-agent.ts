/**
 * SWE-agent trajectories (`.traj`, one JSON document): `history` is the model-visible
 * conversation (system prompt, demonstrations, the task, then assistant actions and their
 * observations: as `tool` messages naming `tool_call_ids` with function calling, as plain `user`
 * messages without it), `trajectory` the executed steps (thought, action, observation,
 * `execution_time`), `info` the outcome (`exit_status`, the submitted patch, `model_stats` with
 * session totals of tokens, cost and API calls).
 *
 * The file has no timestamps: times start at 0 and advance by each step's execution time, so
 * durations are real and dates are not.
 */
import type { ContentBlock, ToolCallBlock } from '../model/message.js';
import type { TurnEndReason } from '../session/index.js';
import { SessionBuilder, toolCall } from './builder.js';
import { idFromFile } from './common.js';
import { arr, count, isObj, num, parseJson, str, textOf, type Obj } from './source.js';
import type { ForeignFormat, ImportedSession, SourceInput } from './types.js';

const isHistory = (h: unknown): boolean => Array.isArray(h) && h.every((m) => isObj(m) && typeof m.role === 'string');

export const sweAgent: ForeignFormat = {
  id: 'swe-agent',
  label: 'SWE-agent trajectory (.traj)',
  sniffLine: (o) => Array.isArray(o.trajectory) || (isHistory(o.history) && !('instance_id' in o)),
  sniffDocument: (d) => isObj(d) && (Array.isArray(d.trajectory) || (isHistory(d.history) && !('instance_id' in d))),
  read: (src, doc) => [readTraj(src, doc)],
};

function readTraj(src: SourceInput, doc: unknown): ImportedSession {
  const d = (doc ?? parseJson(src.text)) as Obj;
  const info = isObj(d.info) ? d.info : {};
  const id = idFromFile(src.file, str(d.environment) ?? 'swe-agent-trajectory');
  const b = new SessionBuilder(
    { id, createdAt: 0 },
    {
      format: 'swe-agent',
      sourceId: id,
      tool: 'SWE-agent',
      toolVersion: str(info.swe_agent_version),
      file: src.file,
      environment: str(d.environment),
    },
  );
  const steps = arr(d.trajectory).filter(isObj);
  const history = arr(d.history).filter(isObj);
  b.records = history.length + steps.length;
  if (history.length === 0 && steps.length > 0) return fromSteps(b, steps, info);

  let clock = 0;
  let step = 0;
  let lastCalls: ToolCallBlock[] = [];
  let started = false;
  for (const [i, m] of history.entries()) {
    b.line = undefined;
    const role = str(m.role);
    const text = textOf(m.content);
    if (m.agent !== undefined && m.agent !== 'primary' && m.agent !== 'main')
      b.losses.add('history.agent (a second agent)', 'its messages are kept in the one session', undefined);
    if (role === 'system') {
      b.setSystem(text);
      continue;
    }
    if (role === 'assistant') {
      const calls = callsOf(m, i);
      const content: ContentBlock[] = [];
      if (text !== '') content.push({ type: 'text', text });
      content.push(...calls);
      b.assistant({ content, time: b.time(clock) });
      lastCalls = calls;
      const exec = num(steps[step]?.execution_time);
      if (exec !== undefined && exec > 0) clock += Math.round(exec * 1000);
      step++;
      continue;
    }
    if (role === 'tool' || (role === 'user' && started && lastCalls.length > 0 && m.is_demo !== true)) {
      const ids = toolCallIds(m);
      const targets = ids.length
        ? ids
        : lastCalls
            .filter((c) => b.awaits(c.id))
            .map((c) => c.id)
            .slice(0, 1);
      if (targets.length === 0) b.result({ callId: ids[0] ?? '', content: [{ type: 'text', text }], time: b.time(clock) });
      for (const callId of targets) b.result({ callId, content: [{ type: 'text', text }], time: b.time(clock) });
      continue;
    }
    if (role === 'user') {
      if (m.is_demo === true) {
        b.input(
          [{ type: 'text', text }],
          { kind: 'plugin', plugin: 'swe-agent', form: 'instructions', summary: 'demonstration' },
          { time: b.time(clock) },
        );
      } else if (!started) {
        started = true;
        b.prompt([{ type: 'text', text }], { time: b.time(clock) });
      } else b.input([{ type: 'text', text }], { kind: 'user' }, { time: b.time(clock) });
      continue;
    }
    b.losses.add(`history role ${String(role)}`, 'no dsh event for it', undefined);
  }
  if (steps.some((s) => s.state !== undefined))
    b.losses.add(
      'trajectory[].state',
      'environment state snapshots; no dsh event for them',
      undefined,
      steps.filter((s) => s.state !== undefined).length,
    );
  return close(b, info);
}

/** A trajectory with steps but no history: each step is one response and its observation. */
function fromSteps(b: SessionBuilder, steps: Obj[], info: Obj): ImportedSession {
  let clock = 0;
  b.losses.add('history', 'the file has no history: the task prompt and system prompt are unknown', undefined);
  b.beginTurn(0);
  steps.forEach((s, i) => {
    const action = str(s.action) ?? '';
    const call = toolCall(`action-${i + 1}`, commandName(action), { command: action });
    const thought = str(s.thought) ?? str(s.response) ?? '';
    b.assistant({ content: [...(thought ? [{ type: 'text' as const, text: thought }] : []), call], time: b.time(clock) });
    const exec = num(s.execution_time);
    if (exec !== undefined && exec > 0) clock += Math.round(exec * 1000);
    b.result({ callId: call.id, content: [{ type: 'text', text: str(s.observation) ?? '' }], time: b.time(clock) });
  });
  return close(b, info);
}

function close(b: SessionBuilder, info: Obj): ImportedSession {
  const stats = isObj(info.model_stats) ? info.model_stats : {};
  const sent = count(stats.tokens_sent);
  const received = count(stats.tokens_received);
  b.totals({
    ...(sent !== undefined || received !== undefined ? { usage: { inputTokens: sent ?? 0, outputTokens: received ?? 0 } } : {}),
    ...(num(stats.instance_cost) !== undefined ? { costUsd: num(stats.instance_cost)! } : {}),
    ...(num(stats.api_calls) !== undefined ? { apiCalls: num(stats.api_calls)! } : {}),
  });
  for (const k of Object.keys(info))
    if (!['model_stats', 'exit_status', 'swe_agent_version'].includes(k))
      b.losses.add(
        `info.${k}`,
        'run outcome data with no dsh event (the patch is also the last tool output when the agent submitted)',
        undefined,
      );
  const status = str(info.exit_status);
  b.endTurn(exitReason(status));
  return { ...b.finish(), key: 'main', label: 'main session' };
}

function exitReason(status: string | undefined): TurnEndReason | undefined {
  if (status === undefined || status === 'submitted') return undefined;
  if (/context/.test(status)) return { kind: 'error', error: { message: status, code: 'CONTEXT_WINDOW_EXCEEDED' } };
  if (/cost/.test(status)) return { kind: 'error', error: { message: status, code: 'QUOTA' } };
  if (/submitted/.test(status)) return undefined; // "submitted (exit_cost)": the patch was still submitted
  return { kind: 'error', error: { message: status, code: 'UNKNOWN' } };
}

function toolCallIds(m: Obj): string[] {
  let v: unknown = m.tool_call_ids;
  if (typeof v === 'string') {
    try {
      v = parseJson(v);
    } catch {
      return [];
    }
  }
  return arr(v).filter((x): x is string => typeof x === 'string');
}

function callsOf(m: Obj, index: number): ToolCallBlock[] {
  let v: unknown = m.tool_calls;
  if (typeof v === 'string') {
    try {
      v = parseJson(v);
    } catch {
      v = undefined;
    }
  }
  const out: ToolCallBlock[] = [];
  for (const c of arr(v)) {
    if (!isObj(c) || !isObj(c.function)) continue;
    out.push(toolCall(str(c.id) ?? '', str(c.function.name) ?? '', c.function.arguments));
  }
  if (out.length) return out;
  // Without function calling the action is a command line parsed from the response text.
  const action = str(m.action);
  if (action === undefined || action.trim() === '') return [];
  return [toolCall(`action-${index}`, commandName(action), { command: action.replace(/\n$/, '') })];
}

function commandName(action: string): string {
  return /^\s*([^\s]+)/.exec(action)?.[1] ?? 'command';
}
