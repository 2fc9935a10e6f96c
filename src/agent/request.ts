/**
 * Building a model request from the log. The configuration passes through the
 * `agent/request` waterfall; the full header (config, adapter-default markers, system prompt,
 * tool schemas) is appended as `request/header` whenever it differs from the one in force (and
 * on the first request of this agent instance, as `initial` or `resume`); route metadata goes to
 * `request/context` when it changes. Messages are `session.deriveMessages()`, nothing else.
 */
import type { EpochHeader } from '../session/events.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { canonicalHeader, headerEquals } from '../session/request-header.js';
import { LlmError } from '../model/failure.js';
import type { AgentContext } from './context.js';

export interface RequestBuild {
  request: GenerateRequest;
  adapter: LlmAdapter | undefined;
}

/** The configuration a request starts from, before `agent/request` listeners. */
export function seedConfig(agent: AgentContext, firstOfInstance: boolean): LlmCallConfig {
  const o = agent.options;
  const logged = agent.session.requestHeader();
  if (!firstOfInstance && logged) {
    // Later requests continue from what the log says, minus values the adapter filled in (the
    // adapter re-derives them, so a changed default is picked up rather than frozen).
    const cfg: LlmCallConfig = { ...logged.config };
    for (const k of Object.keys(logged.adapterDefaults ?? {})) delete (cfg as unknown as Record<string, unknown>)[k];
    return cfg;
  }
  const cfg: LlmCallConfig = { provider: o.provider, model: o.model };
  if (o.reasoningEffort !== undefined) cfg.reasoningEffort = o.reasoningEffort;
  else if (
    logged &&
    logged.config.provider === o.provider &&
    logged.config.model === o.model &&
    logged.config.reasoningEffort !== undefined &&
    !logged.adapterDefaults?.reasoningEffort
  ) {
    cfg.reasoningEffort = logged.config.reasoningEffort; // resume keeps an explicit choice
  }
  if (o.temperature !== undefined) cfg.temperature = o.temperature;
  if (o.maxTokens !== undefined) cfg.maxTokens = o.maxTokens;
  if (o.stop !== undefined) cfg.stop = [...o.stop];
  return cfg;
}

export async function buildRequest(
  agent: AgentContext,
  turn: number,
  step: number,
  signal: AbortSignal,
  firstOfInstance: boolean,
): Promise<RequestBuild> {
  const session = agent.session;
  const base = seedConfig(agent, firstOfInstance);
  const config = await agent.bus.waterfall('agent/request', { agent, turn, step, signal }, () => base);
  if (!config.provider || !config.model) {
    throw new LlmError({
      code: 'INVALID_REQUEST',
      message: `the request names no ${!config.provider ? 'provider' : 'model'}; set one in the agent options`,
    });
  }
  const adapter = agent.adapters.get(config.provider);
  if (!adapter && !agent.bus.has('llm/stream')) {
    throw new LlmError({
      code: 'NO_ADAPTER',
      message: `no model adapter serves provider "${config.provider}" (registered: ${agent.adapters.providers().join(', ') || 'none'})`,
    });
  }
  const resolved = adapter?.resolveCall ? adapter.resolveCall(config) : { config };
  const system = await agent.systemPrompt.assemble();
  signal.throwIfAborted();
  const draft: EpochHeader = { config: resolved.config };
  if (resolved.adapterDefaults && Object.keys(resolved.adapterDefaults).length > 0) draft.adapterDefaults = resolved.adapterDefaults;
  if (system) draft.system = system;
  const tools = agent.tools.schemas();
  if (tools.length > 0) draft.tools = tools;
  const header = canonicalHeader(draft);

  const prior = session.requestHeader();
  if (firstOfInstance) session.append('request/header', { header, reason: prior ? 'resume' : 'initial' });
  else if (!headerEquals(prior, header)) session.append('request/header', { header, reason: 'change' });

  const info = adapter?.modelInfo?.(header.config.model);
  const context: { provider: string; model: string; contextWindow?: number } = {
    provider: header.config.provider,
    model: header.config.model,
  };
  if (info?.contextWindow !== undefined) context.contextWindow = info.contextWindow;
  const last = session.requestContext();
  if (!last || last.provider !== context.provider || last.model !== context.model || last.contextWindow !== context.contextWindow) {
    session.append('request/context', context);
  }

  // The logged (frozen) header is what the request is built from.
  const logged = session.requestHeader()!;
  const request: GenerateRequest = {
    ...logged.config,
    messages: session.deriveMessages(),
    sessionId: session.id,
    signal,
    purpose: 'agent',
  };
  if (logged.system !== undefined) request.system = logged.system;
  if (logged.tools !== undefined) request.tools = logged.tools;
  return { request: Object.freeze(request), adapter };
}
