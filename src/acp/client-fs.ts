/**
 * The editor's files: when the client offers `fs.readTextFile` / `fs.writeTextFile`, the file
 * tools' reads, writes and edits of workspace files go through `fs/read_text_file` and
 * `fs/write_text_file`, so the model sees the editor's buffers (unsaved changes included) and the
 * editor sees the changes as it makes them.
 *
 * A terminal of the filesystem seam: the listeners are the last on `fs/read`, `fs/write` and
 * `fs/edit`, after every policy listener (workspace confinement, the sandbox mode, hidden files),
 * so a request reaches the client only as a checked real path inside the workspace, and a refused
 * path is refused exactly as for the local tools. The local file is still consulted first for
 * what the editor cannot say (does it exist, is it a directory, a device, a file with other hard
 * links), with the local terminal's errors; the text the client returns gets the local read's
 * size and binary checks. Paths outside the workspace that policy lets through (the spill
 * directory) and directory listings, searches and stats stay local. Results have the local
 * terminals' shape, so the tools' results (and the log) do not change.
 *
 * Weaker than local, and said in docs/acp.md: the client writes by path, so the verified directory
 * handles that pin a local write to the checked directory do not apply between the check and the
 * client's write; and a buffer the editor holds for a file not yet on disk is not read (the file
 * does not exist for the tools until it is saved).
 */
import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { dirname, relative, isAbsolute } from 'node:path';
import type { AgentContext, FileSystemCapabilities } from '@agentclientprotocol/sdk/unstable';
import { FsError, fsErrorFrom } from '../tools/fs/errors.js';
import type { FsEditRequest, FsReadRequest, FsRequest, FsWriteRequest } from '../tools/fs/hooks.js';
import { applyEdit, checkHardLinks, checkNotBinary, checkReadSize, requestPath } from '../tools/fs/local.js';
import type { ToolPlugin } from '../tools/host.js';
import '../tools/fs/hooks.js';

/** What the editor is asked for a file whose whole text the edit needs (the local edit's limit). */
const EDIT_MAX_BYTES = 16 * 1024 * 1024;
/** A write's previous text is a diff basis only up to this size (as locally). */
const PREVIOUS_MAX_BYTES = 4 * 1024 * 1024;

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The local file, as the local terminals would find it: undefined when it does not exist. */
async function localFile(r: FsRequest, p: string, verb: string, linkVerb: string): Promise<Stats | undefined> {
  let st: Stats;
  try {
    st = await lstat(p);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return undefined;
    throw fsErrorFrom(e, verb, p);
  }
  if (st.isDirectory()) throw new FsError('FS_IS_DIRECTORY', `cannot ${verb} "${p}": it is a directory, not a file`);
  if (!st.isFile()) throw new FsError('FS_NOT_A_FILE', `cannot ${verb} "${p}": it is not a regular file (a device, FIFO or socket)`);
  checkHardLinks(r, st, linkVerb, p);
  return st;
}

const notFound = (verb: string, p: string): FsError => new FsError('FS_NOT_FOUND', `cannot ${verb} "${p}": not found`);

function clientFailure(verb: string, p: string, e: unknown): FsError {
  const msg = e instanceof Error ? e.message : String(e);
  return new FsError('FS_IO', `cannot ${verb} "${p}": the editor refused: ${msg}`, { cause: e });
}

export interface ClientFsOptions {
  client: AgentContext;
  sessionId: string;
  caps: FileSystemCapabilities;
  /** The workspace's real root: only paths under it go to the client. */
  root: string;
}

/** Installs the client's file system as the terminal of the file tools' reads, writes and edits. */
export function clientFs(opts: ClientFsOptions): ToolPlugin {
  const { client, sessionId } = opts;
  const canRead = opts.caps.readTextFile === true;
  const canWrite = opts.caps.writeTextFile === true;

  const readText = async (p: string, verb: string, maxBytes: number): Promise<string> => {
    let content: string;
    try {
      ({ content } = await client.request('fs/read_text_file', { sessionId, path: p }));
    } catch (e) {
      throw clientFailure(verb, p, e);
    }
    const bytes = Buffer.from(content, 'utf8');
    checkReadSize(p, bytes.length, maxBytes);
    checkNotBinary(p, bytes);
    return content;
  };
  const writeText = async (p: string, content: string): Promise<void> => {
    try {
      // The local write creates missing directories; the client is not required to.
      await mkdir(dirname(p), { recursive: true });
    } catch (e) {
      throw fsErrorFrom(e, 'write', p);
    }
    try {
      await client.request('fs/write_text_file', { sessionId, path: p, content });
    } catch (e) {
      throw clientFailure('write', p, e);
    }
  };

  return (host) => {
    const offs: (() => void)[] = [];
    const ours = (r: FsRequest): string | undefined => {
      const p = requestPath(r);
      return inside(opts.root, p) ? p : undefined;
    };
    if (canRead) {
      offs.push(
        host.on(
          'fs/read',
          async (r: FsReadRequest, next) => {
            const p = ours(r);
            if (p === undefined) return next(r);
            if (!(await localFile(r, p, 'read', 'read'))) throw notFound('read', p);
            const text = await readText(p, 'read', r.maxBytes);
            return { path: p, text, bytes: Buffer.byteLength(text, 'utf8') };
          },
          { name: 'acp-client-fs' },
        ),
      );
    }
    if (canWrite) {
      offs.push(
        host.on(
          'fs/write',
          async (r: FsWriteRequest, next) => {
            const p = ours(r);
            if (p === undefined) return next(r);
            const st = await localFile(r, p, 'write', 'write');
            let previous: string | undefined;
            if (st && canRead) previous = await readText(p, 'write', PREVIOUS_MAX_BYTES).catch(() => undefined);
            await writeText(p, r.content);
            const created = st === undefined;
            return previous === undefined ? { path: p, created } : { path: p, created, previous };
          },
          { name: 'acp-client-fs' },
        ),
      );
    }
    // An edit is a read and a write of the same text: the editor's, or the disk's (both local).
    if (canRead && canWrite) {
      offs.push(
        host.on(
          'fs/edit',
          async (r: FsEditRequest, next) => {
            const p = ours(r);
            if (p === undefined) return next(r);
            if (!(await localFile(r, p, 'read', 'edit'))) throw notFound('read', p);
            const before = await readText(p, 'read', EDIT_MAX_BYTES);
            const { after, replacements } = applyEdit(before, r, p);
            await writeText(p, after);
            return { path: p, before, after, replacements };
          },
          { name: 'acp-client-fs' },
        ),
      );
    }
    return () => {
      for (const off of offs) off();
    };
  };
}
