/**
 * Policies on the filesystem seam. A policy sees every `fs/*` request once, whatever tool made
 * it, and either passes it on (possibly rewritten) or throws an `FsError` saying why not.
 */
import type { Disposer, HookName, Listener, ListenOptions } from '../../hooks/bus.js';
import { FS_OPS, type FsRequest } from './hooks.js';
import { resolveConfinedIn, type AllowedRoot } from './paths.js';
import './hooks.js';

export type FsPolicy = (request: FsRequest) => FsRequest | Promise<FsRequest>;

type On = <K extends HookName>(hook: K, fn: Listener<K>, opts?: ListenOptions) => Disposer;

/** Attach `policy` to every `fs/*` waterfall. */
export function attachFsPolicy(on: On, name: string, policy: FsPolicy, opts: { prepend?: boolean } = {}): Disposer {
  const disposers = FS_OPS.map((op) => {
    const listener = async (req: FsRequest, next: (r?: FsRequest) => Promise<unknown>): Promise<unknown> => next(await policy(req));
    return on(`fs/${op}` as 'fs/read', listener as unknown as Listener<'fs/read'>, { name, ...(opts.prepend ? { prepend: true } : {}) });
  });
  return () => {
    for (const d of disposers) d();
  };
}

/**
 * Confine every file operation to the workspace root (plus `extraRoots`, e.g. the spill
 * directory for reads): `..`, absolute paths outside, and symbolic links that lead out are refused.
 */
export function workspaceConfinement(extraRoots: readonly AllowedRoot[] = []): FsPolicy {
  return async (req) => {
    const real = await resolveConfinedIn(req.root, req.path, req.access, extraRoots);
    return { ...req, path: real.path, confined: true, confinedTo: real.root };
  };
}
