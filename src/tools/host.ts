/**
 * What a tool plugin may use of the agent hosting it. The agent layer sits above this one, so a
 * tool plugin names these capabilities rather than the agent: the agent's plugin host provides
 * them (and more), so a `ToolPlugin` can be passed straight to `agent.use()`.
 */
import type { Disposer, HookName, Listener, ListenOptions } from '../hooks/bus.js';
import type { Session } from '../session/session.js';
import type { ToolDefinition } from './types.js';

export interface ToolHost {
  readonly session: Session;
  /** The workspace root. */
  readonly cwd: string;
  on<K extends HookName>(hook: K, fn: Listener<K>, opts?: ListenOptions): Disposer;
  tool(def: ToolDefinition): Disposer;
  /** A registered tool, by name. */
  getTool(name: string): ToolDefinition | undefined;
}

/** Registers tools and listeners on a host; returns its disposer (or nothing). */
export type ToolPlugin = (host: ToolHost) => Disposer | void;
