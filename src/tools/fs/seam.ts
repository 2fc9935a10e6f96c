/**
 * The one door file tools go through. Each method builds a request, runs it down its `fs/*`
 * waterfall (where policy listeners confine, deny or audit it) and lets the local terminal do
 * the I/O at the end. Tools never import `node:fs`.
 */
import type { HookBus } from '../../hooks/bus.js';
import type { ToolRunContext } from '../types.js';
import type {
  FsCaller,
  FsEditResult,
  FsListResult,
  FsReadResult,
  FsRequestMap,
  FsSearchResult,
  FsStatResult,
  FsWriteResult,
} from './hooks.js';
import { localTerminals, type LocalFsOptions, type LocalTerminals } from './local.js';
import './hooks.js';

type Extra<O extends keyof FsRequestMap> = Omit<
  FsRequestMap[O],
  'op' | 'path' | 'requested' | 'root' | 'access' | 'caller' | 'confined' | 'signal'
>;

export class WorkspaceFs {
  private readonly terminals: LocalTerminals;

  constructor(
    private readonly bus: HookBus,
    readonly root: string,
    private readonly caller: FsCaller = {},
    private readonly signal?: AbortSignal,
    opts: LocalFsOptions = {},
  ) {
    this.terminals = localTerminals(opts);
  }

  /** The seam as seen from one tool call. */
  static forCall(ctx: ToolRunContext, opts: LocalFsOptions = {}): WorkspaceFs {
    return new WorkspaceFs(ctx.bus, ctx.cwd, { callId: ctx.callId, toolName: ctx.toolName }, ctx.signal, opts);
  }

  private base<O extends keyof FsRequestMap>(op: O, path: string, access: 'read' | 'write') {
    const b = { op, path, requested: path, root: this.root, access, caller: this.caller };
    return this.signal ? { ...b, signal: this.signal } : b;
  }

  read(path: string, extra: Extra<'read'>): Promise<FsReadResult> {
    return this.bus.waterfall('fs/read', { ...this.base('read', path, 'read'), ...extra }, (r) => this.terminals.read(r));
  }
  write(path: string, extra: Extra<'write'>): Promise<FsWriteResult> {
    return this.bus.waterfall('fs/write', { ...this.base('write', path, 'write'), ...extra }, (r) => this.terminals.write(r));
  }
  edit(path: string, extra: Extra<'edit'>): Promise<FsEditResult> {
    return this.bus.waterfall('fs/edit', { ...this.base('edit', path, 'write'), ...extra }, (r) => this.terminals.edit(r));
  }
  list(path: string, extra: Extra<'list'>): Promise<FsListResult> {
    return this.bus.waterfall('fs/list', { ...this.base('list', path, 'read'), ...extra }, (r) => this.terminals.list(r));
  }
  stat(path: string): Promise<FsStatResult> {
    return this.bus.waterfall('fs/stat', this.base('stat', path, 'read'), (r) => this.terminals.stat(r));
  }
  search(path: string, extra: Extra<'search'>): Promise<FsSearchResult> {
    return this.bus.waterfall('fs/search', { ...this.base('search', path, 'read'), ...extra }, (r) => this.terminals.search(r));
  }
}
