/**
 * `/model`: the model of a running session's next requests, chosen after its agent started (dsh
 * chat's `/model`, dsh acp's `/model` and its model selector). The choice is applied where each
 * request is built (`agent/request`), so the log records it as it records every model: in the
 * request's `request/header`, from the next request on. The plugin goes on every agent the
 * session gets (a resume, a fork, a mode change) and brings the adapters the choices needed.
 */
import type { Agent } from '../agent/agent.js';
import type { Plugin } from '../agent/context.js';
import type { LlmAdapter } from '../llm/adapter.js';
import type { ModelRef } from '../llm/select.js';

export class ModelSwitch {
  private chosen: ModelRef | undefined;
  private readonly adapters: LlmAdapter[] = [];

  /** The model chosen with `set`, if any (otherwise requests keep the agent's own). */
  get choice(): ModelRef | undefined {
    return this.chosen;
  }

  /** `provider:model` of the next requests: the choice, or `started` (the agent's own). */
  current(started: ModelRef): string {
    const r = this.chosen ?? started;
    return `${r.provider}:${r.model}`;
  }

  /**
   * Use `ref` from the next request on. `adapter()` makes the adapter for its provider when the
   * agent has none; it may throw (a missing key), and then nothing changes.
   */
  set(agent: Agent, ref: ModelRef, adapter: () => LlmAdapter | undefined): void {
    if (!agent.adapters.get(ref.provider)) {
      const a = adapter();
      if (a) {
        agent.adapters.register(a);
        this.adapters.push(a);
      }
    }
    this.chosen = { provider: ref.provider, model: ref.model };
  }

  plugin(): Plugin {
    return (host) => {
      for (const a of this.adapters) if (a.providers.every((p) => !host.agent.adapters.get(p))) host.adapter(a);
      return host.on(
        'agent/request',
        async (p, next) => {
          const c = await next(p);
          const o = this.chosen;
          if (!o) return c;
          const out = { ...c, provider: o.provider, model: o.model };
          // An effort label means something only to the provider it was chosen for.
          if (o.provider !== c.provider) delete out.reasoningEffort;
          return out;
        },
        { name: 'dsh:model-switch' },
      );
    };
  }
}
