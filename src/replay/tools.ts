/**
 * The replay tool layer: one tool per recorded tool name, answering each call with the result the
 * recording holds for its callId. No side effects, no workspace: what makes a replay LLM-free and
 * tool-free.
 *
 * What the model was shown is kept: when the recorded header lists real tool schemas, those are
 * registered verbatim (same names, descriptions, parameters, order), so the replayed header
 * equals the recorded one; when it holds the `{{tools}}` placeholder, each called name gets a
 * permissive schema. A call that ran beside others in the recording is concurrency-safe here, so
 * the loop interleaves `tool/call`s and `tool/result`s as the recording did. A `todo/write` the
 * recorded tool wrote is written again (it is a core event, compared like the calls).
 */
import type { ToolDefinition, ToolResultValue, ToolRunContext } from '../tools/types.js';
import { ToolError } from '../tools/types.js';
import { parseArguments } from '../tools/pipeline.js';
import type { JsonObject } from '../model/json.js';
import type { ToolSchema } from '../model/request.js';
import { deepEqual } from '../session/surface.js';
import { headerToolNames, headerToolSchemas } from '../session/request-header.js';
import type { RecordedLog, RecordedStep, RecordedToolCall } from '../session/recording.js';

/** Finds the recorded step the live run is in (the harness maps live turns onto recorded ones). */
export type StepLocator = (live: { turn: number; step: number }) => RecordedStep | undefined;

const PERMISSIVE: JsonObject = { type: 'object', additionalProperties: true };

/** The schemas the recording showed the model, when it kept them (not a placeholder). */
export function recordedToolSchemas(log: RecordedLog): ToolSchema[] | undefined {
  // A header that listed only tool names (some dsh writers) recorded no schemas.
  for (const h of log.headers) if (Array.isArray(h.header.tools)) return headerToolSchemas<ToolSchema>(h.header.tools);
  return undefined;
}

export function recordedCall(step: RecordedStep | undefined, callId: string): RecordedToolCall | undefined {
  return step?.toolCalls.find((c) => c.callId === callId);
}

export function replayTools(
  log: RecordedLog,
  locate: StepLocator,
  current: () => { turn: number; step: number } | undefined,
): ToolDefinition[] {
  const schemas = recordedToolSchemas(log);
  const defs: ToolSchema[] = schemas ? [...schemas] : [];
  if (!schemas) {
    const seen = new Set<string>();
    const add = (name: string): void => {
      if (name === '' || seen.has(name)) return;
      seen.add(name);
      defs.push({ name, description: `Replays the recorded results of ${name}.`, parameters: PERMISSIVE });
    };
    for (const h of log.headers) for (const n of headerToolNames(h.header.tools) ?? []) add(n);
    for (const t of log.turns) for (const s of t.steps) for (const c of s.toolCalls) add(c.name);
  }
  return defs.map((schema) => replayTool(schema, locate, current));
}

function replayTool(schema: ToolSchema, locate: StepLocator, current: () => { turn: number; step: number } | undefined): ToolDefinition {
  return {
    name: schema.name,
    description: schema.description,
    // The recorded result is the answer whatever the arguments; validating them could only add
    // an error the recording does not have.
    parameters: { jsonSchema: schema.parameters, validate: (args: unknown) => ({ ok: true as const, value: args }) },
    isConcurrencySafe(args: unknown) {
      const pos = current();
      const step = pos ? locate(pos) : undefined;
      const call = step?.toolCalls.find((c) => c.name === schema.name && deepEqual(parseArguments(c.arguments), args));
      return call?.overlapped === true;
    },
    execute(_args: unknown, ctx: ToolRunContext): ToolResultValue {
      const call = recordedCall(locate({ turn: ctx.turn, step: ctx.step }), ctx.callId);
      const result = call?.result;
      if (!call || !result) {
        throw new ToolError('REPLAY_NO_RESULT', `the recording has no result for call ${ctx.callId} (${schema.name}) in this step`);
      }
      for (const todos of call.todos) ctx.session.append('todo/write', { todos });
      const block = result.data.message.content[0];
      const out: ToolResultValue = { content: block.content, isError: block.isError === true };
      if (result.data.error) out.error = result.data.error;
      if (result.data.meta !== undefined) out.meta = result.data.meta;
      return out;
    },
  };
}
