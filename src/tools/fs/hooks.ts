/**
 * The filesystem seam's capability events. Every file tool does its I/O through one of these
 * waterfalls, so policy (workspace confinement, sandbox modes, audits, read-before-write rules)
 * attaches once, as listeners, and never inside a tool.
 *
 * A listener may rewrite the request it passes on (confinement replaces `path` with the real
 * path it checked), refuse by throwing an `FsError`, or answer without calling `next`. The
 * terminal does the I/O on whatever `path` reaches it.
 */
import type { WaterfallHook } from '../../hooks/bus.js';

export type FsOp = 'read' | 'write' | 'edit' | 'list' | 'stat' | 'search';

/** Who is asking: lets policy tie a file operation to the tool call behind it. */
export interface FsCaller {
  callId?: string;
  toolName?: string;
}

export interface FsRequestBase<O extends FsOp> {
  op: O;
  /** The path as requested; confinement rewrites it to the checked real path. */
  path: string;
  /** The path as the caller spelled it, kept for messages. */
  requested: string;
  /** Workspace root. */
  root: string;
  access: 'read' | 'write';
  caller: FsCaller;
  /** Set by confinement once `path` is a checked real path. */
  confined?: boolean;
  /**
   * Set by confinement: the real root `path` was checked against. The terminal opens `path`
   * from there through verified directory handles, so a concurrent rename cannot redirect it.
   */
  confinedTo?: string;
  /**
   * `allow`: a regular file with more than one hard link may be read and written (policy sets it
   * under `danger-full-access`, an approved escalation, or a matching allow rule). Otherwise a
   * confined request refuses such a file (`FS_HARD_LINK`): another name may be outside.
   */
  hardLinks?: 'allow';
  /** Real paths no operation may read (policy's `hidePaths`): walks skip them, searches drop their matches. */
  hidden?: readonly string[];
  /** The tool call's signal: long operations (search, walks) stop when it aborts. */
  signal?: AbortSignal;
}

export interface FsReadRequest extends FsRequestBase<'read'> {
  /** Refuse files larger than this (the caller should page or search instead). */
  maxBytes: number;
}
export interface FsReadResult {
  path: string;
  text: string;
  bytes: number;
}

export interface FsWriteRequest extends FsRequestBase<'write'> {
  content: string;
}
export interface FsWriteResult {
  path: string;
  created: boolean;
  /** The previous content when the file existed and was text. */
  previous?: string;
}

export interface FsEditRequest extends FsRequestBase<'edit'> {
  oldString: string;
  newString: string;
  replaceAll: boolean;
}
export interface FsEditResult {
  path: string;
  before: string;
  after: string;
  replacements: number;
}

export interface FsEntry {
  /** `/`-separated, relative to the listed directory. */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mtimeMs: number;
}
export interface FsListRequest extends FsRequestBase<'list'> {
  /** Walk the whole tree (files only) instead of one directory's entries. */
  recursive: boolean;
  /** Skip what `.gitignore` files ignore. VCS metadata directories are always skipped. */
  gitignore: boolean;
  /** Stop after this many entries (`truncated` says so). */
  limit: number;
}
export interface FsListResult {
  path: string;
  entries: FsEntry[];
  truncated: boolean;
}

export interface FsStatRequest extends FsRequestBase<'stat'> {}
export interface FsStatResult {
  path: string;
  type: FsEntry['type'];
  size: number;
  mtimeMs: number;
}

export interface FsSearchRequest extends FsRequestBase<'search'> {
  /** A regular expression (ripgrep syntax; the JS fallback uses JS RegExp). */
  pattern: string;
  /** One glob filter for file names. */
  include?: string;
  /** Keep at most this many matches (`total` still counts them all). */
  maxMatches: number;
  /** Lines longer than this many characters are cut in the preview. */
  maxLineChars: number;
}
export interface FsSearchMatch {
  /** `/`-separated, relative to the workspace root. */
  path: string;
  lineNumber: number;
  line: string;
}
export interface FsSearchResult {
  matches: FsSearchMatch[];
  total: number;
  truncated: boolean;
  backend: 'ripgrep' | 'js';
  /** Files not searched because they have more than one hard link (and policy did not allow that). */
  skippedHardLinks?: number;
}

export interface FsRequestMap {
  read: FsReadRequest;
  write: FsWriteRequest;
  edit: FsEditRequest;
  list: FsListRequest;
  stat: FsStatRequest;
  search: FsSearchRequest;
}
export interface FsResultMap {
  read: FsReadResult;
  write: FsWriteResult;
  edit: FsEditResult;
  list: FsListResult;
  stat: FsStatResult;
  search: FsSearchResult;
}
export type FsRequest = FsRequestMap[FsOp];

export const FS_OPS: readonly FsOp[] = ['read', 'write', 'edit', 'list', 'stat', 'search'];

declare module '../../hooks/bus.js' {
  interface HookMap {
    'fs/read': WaterfallHook<FsReadRequest, FsReadResult>;
    'fs/write': WaterfallHook<FsWriteRequest, FsWriteResult>;
    'fs/edit': WaterfallHook<FsEditRequest, FsEditResult>;
    'fs/list': WaterfallHook<FsListRequest, FsListResult>;
    'fs/stat': WaterfallHook<FsStatRequest, FsStatResult>;
    /** Content search (grep); the terminal may use ripgrep, which reads files itself. */
    'fs/search': WaterfallHook<FsSearchRequest, FsSearchResult>;
  }
}
