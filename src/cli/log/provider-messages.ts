/**
 * `dsh log export --format openai|anthropic`: the model-visible history at the log's end (or at
 * `--at SEQ`) as the request body a provider would take, through the adapters' own history
 * conversions, so the array is exactly what dsh sends. System prompt, model, sampling and tools
 * come from the `request/header` in force at that seq. Images are not inlined (their bytes are
 * not in the log): the adapters' placeholder text stands in for them.
 */
import type { SessionEvent } from '../../session/index.js';
import type { EpochHeader } from '../../session/events.js';
import type { Message } from '../../model/message.js';
import type { ToolSchema } from '../../model/request.js';
import { passesReasoningBack, toChatMessages } from '../../llm/openai-history.js';
import { toAnthropicMessages } from '../../llm/anthropic-history.js';

export type ProviderFormat = 'openai' | 'anthropic';

export interface ProviderBody {
  body: Record<string, unknown>;
  /** Tools the header names without a schema (dsh logs may list names only): left out. */
  toolsWithoutSchema: string[];
}

/** The latest `request/header` at or before `at`. */
export function headerAt(events: readonly SessionEvent[], at: number): EpochHeader | undefined {
  for (let i = Math.min(at, events.length - 1); i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'request/header') return e.data.header;
  }
  return undefined;
}

function schemas(header: EpochHeader | undefined): { tools: ToolSchema[]; nameOnly: string[] } {
  const tools: ToolSchema[] = [];
  const nameOnly: string[] = [];
  for (const t of (header?.tools ?? []) as unknown[]) {
    if (typeof t === 'string') nameOnly.push(t);
    else if (t && typeof t === 'object' && typeof (t as ToolSchema).name === 'string' && (t as ToolSchema).parameters)
      tools.push(t as ToolSchema);
    else if (t && typeof t === 'object' && typeof (t as ToolSchema).name === 'string') nameOnly.push((t as ToolSchema).name);
  }
  return { tools, nameOnly };
}

export async function providerBody(
  format: ProviderFormat,
  messages: readonly Message[],
  header: EpochHeader | undefined,
): Promise<ProviderBody> {
  const { tools, nameOnly } = schemas(header);
  const config = header?.config;
  const body: Record<string, unknown> = {};
  if (config?.model !== undefined) body['model'] = config.model;
  if (format === 'openai') {
    // Reasoning goes back (DeepSeek's reasoning_content) where the route sends it: llm/ decides which.
    const reasoningPassback = passesReasoningBack(String(config?.provider ?? ''));
    body['messages'] = await toChatMessages(messages, { system: header?.system, reasoningPassback });
    if (config?.maxTokens !== undefined) body['max_tokens'] = config.maxTokens;
    if (config?.temperature !== undefined) body['temperature'] = config.temperature;
    if (tools.length > 0)
      body['tools'] = tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
  } else {
    const h = await toAnthropicMessages(messages, { system: header?.system, replayProviders: ['anthropic'] });
    if (h.system !== undefined) body['system'] = h.system;
    body['messages'] = h.messages;
    body['max_tokens'] = config?.maxTokens ?? 4096;
    if (config?.temperature !== undefined) body['temperature'] = config.temperature;
    if (tools.length > 0) body['tools'] = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  }
  return { body, toolsWithoutSchema: nameOnly };
}
