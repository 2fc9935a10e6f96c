/** Adapter registry: which adapter serves which provider route. */
import { CodedError } from '../model/coded-error.js';
import type { Disposer } from '../hooks/bus.js';
import type { LlmAdapter } from './adapter.js';

export class AdapterRegistryError extends CodedError<'DUPLICATE_ADAPTER' | 'NO_ADAPTER'> {
  constructor(code: 'DUPLICATE_ADAPTER' | 'NO_ADAPTER', message: string) {
    super(code, message);
    this.name = 'AdapterRegistryError';
  }
}

export class AdapterRegistry {
  private readonly byProvider = new Map<string, LlmAdapter>();

  register(adapter: LlmAdapter): Disposer {
    for (const p of adapter.providers) {
      if (this.byProvider.has(p))
        throw new AdapterRegistryError('DUPLICATE_ADAPTER', `an adapter for provider "${p}" is already registered`);
    }
    for (const p of adapter.providers) this.byProvider.set(p, adapter);
    return () => {
      for (const p of adapter.providers) if (this.byProvider.get(p) === adapter) this.byProvider.delete(p);
    };
  }

  get(provider: string): LlmAdapter | undefined {
    return this.byProvider.get(provider);
  }

  providers(): string[] {
    return [...this.byProvider.keys()];
  }
}
