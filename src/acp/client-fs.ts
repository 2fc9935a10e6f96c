/**
 * The editor's files: when the client offers `fs.readTextFile`, the file tools' reads of workspace
 * files (and an edit's read, when it also offers `fs.writeTextFile`) go through
 * `fs/read_text_file`, so the model sees the editor's buffers, unsaved changes included.
 *
 * Every write stays local. The editor opens what it is asked for *by name* and follows links, one
 * round trip after policy checked the path, and a background job of the agent's own can swap a
 * workspace file for a link to dsh's config (the key) or to a file outside in between. A local
 * write goes through the verified handles of `beneath.ts` instead, so writes and edits are made on
 * the disk (no ACP message asks an editor to reload a file: it sees the change on disk, as for a
 * change by `bash`, and the tool call's diff shows it).
 *
 * A read from the editor is checked around the request (`pinned.ts`): the file is pinned through
 * verified handles before asking and again after the answer. If the name led elsewhere meanwhile,
 * or anything on the way changed status and the editor's text is not the file's own, nothing it
 * returned is used: the call fails with `FS_PATH_CHANGED`, and later reads of that file on this
 * ACP connection come from the disk (the editor may keep a buffer it loaded through the link, and
 * its buffers outlive a session). The pins see only the round trip: a buffer the editor reloaded
 * through a link *between* two requests passes them, so an editor text holding one of dsh's
 * secrets is refused whatever path it came by (`FS_SECRET_IN_BUFFER`, `buffer-secrets.ts`).
 *
 * A terminal of the filesystem seam: the listeners are the last on `fs/read` and `fs/edit`, after
 * every policy listener (workspace confinement, the sandbox mode, hidden files), so only a checked
 * real path inside the workspace is ever named to the editor. The pin gives the local terminal's
 * errors (not found, a directory, a device, other hard links), and the editor's text gets the local
 * size and binary checks. Paths outside the workspace (the spill directory), listings, searches and
 * stats stay local. Results have the local terminals' shape, so the tools' results (and the log) do
 * not change. A buffer of a file not yet on disk is not read (it does not exist for the tools).
 */
import { relative, isAbsolute } from 'node:path';
import type { AgentContext, FileSystemCapabilities } from '@agentclientprotocol/sdk/unstable';
import { FsError } from '../tools/fs/errors.js';
import type { FsEditRequest, FsReadRequest, FsRequest } from '../tools/fs/hooks.js';
import { hiddenFileSecrets, holdsSecret } from './buffer-secrets.js';
import { applyEdit, checkNotBinary, checkReadSize, localTerminals, requestPath } from '../tools/fs/local.js';
import { comparePins, pinFile, pinnedBytes } from '../tools/fs/pinned.js';
import type { ToolPlugin } from '../tools/host.js';
import '../tools/fs/hooks.js';

/** What the editor is asked for a file whose whole text the edit needs (the local edit's limit). */
const EDIT_MAX_BYTES = 16 * 1024 * 1024;

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function clientFailure(verb: string, p: string, e: unknown): FsError {
  const msg = e instanceof Error ? e.message : String(e);
  return new FsError('FS_IO', `cannot ${verb} "${p}": the editor refused: ${msg}`, { cause: e });
}

function changedDuringRead(p: string, why: string, cause?: unknown): FsError {
  return new FsError(
    'FS_PATH_CHANGED',
    `"${p}" changed while the editor was reading it (${why}); nothing it returned is used, and later reads of this file on ` +
      'this connection come from the disk. Try again once nothing else is renaming files there',
    cause === undefined ? undefined : { cause },
  );
}

function secretInBuffer(p: string): FsError {
  return new FsError(
    'FS_SECRET_IN_BUFFER',
    `the editor's text of "${p}" holds one of dsh's secrets (a provider key or a value of its config); nothing it returned ` +
      'is used, and later reads of this file come from the disk. The editor may hold a buffer it loaded through a link',
  );
}

/**
 * The edit of the editor's `text`, with the file's line ends kept. An editor that gives CRLF
 * files as LF (CodeCompanion does) would otherwise have the whole file rewritten to LF. When the
 * text is the disk's with its CRLFs made LF, the edit is made on the disk's text if it applies
 * there the same number of times (every line end kept as it was); otherwise (an old_string across
 * lines) the edited text gets CRLF line ends if most of the disk's were.
 */
function keepLineEnds(
  text: string,
  disk: string | undefined,
  r: Pick<FsEditRequest, 'oldString' | 'newString' | 'replaceAll'>,
  p: string,
): { before: string; after: string; replacements: number } {
  const edited = applyEdit(text, r, p);
  if (disk === undefined || disk === text || !disk.includes('\r\n') || disk.replace(/\r\n/g, '\n') !== text)
    return { before: text, ...edited };
  try {
    const onDisk = applyEdit(disk, r, p);
    if (onDisk.replacements === edited.replacements) return { before: disk, ...onDisk };
  } catch {
    // The old string spans a line end: not in the disk's text as written.
  }
  const crlf = disk.split('\r\n').length - 1;
  const lf = disk.split('\n').length - 1 - crlf;
  return { before: disk, after: crlf > lf ? edited.after.replace(/\r?\n/g, '\r\n') : edited.after, replacements: edited.replacements };
}

export interface ClientFsOptions {
  client: AgentContext;
  sessionId: string;
  caps: FileSystemCapabilities;
  /** The workspace's real root: only paths under it go to the client. */
  root: string;
  /** dsh's configured secrets (`configuredSecrets`): an editor text holding one is refused. */
  secrets: readonly string[];
  /**
   * Files whose editor text is not trusted again (a read found them changed, or the text held a
   * secret). One set per ACP connection: the editor keeps its buffers across sessions.
   */
  distrusted: Set<string>;
}

/** The editor's text with its own bytes; `disk`: the file's bytes as the second pin saw them, when asked for. */
interface Verified {
  text: string;
  bytes: number;
  disk?: Buffer | undefined;
}

/** Installs the client's file system as the terminal of the file tools' reads (and edits' reads). */
export function clientFs(opts: ClientFsOptions): ToolPlugin {
  const { client, sessionId, distrusted } = opts;
  const canRead = opts.caps.readTextFile === true;
  const canWrite = opts.caps.writeTextFile === true;
  const local = localTerminals();

  /** The editor's answer, or why there is none; a cancelled turn stops waiting for it. */
  const ask = async (r: FsRequest, p: string, verb: string): Promise<{ ok: true; content: string } | { ok: false; error: FsError }> => {
    let res: unknown;
    try {
      res = await client.request(
        'fs/read_text_file',
        { sessionId, path: p },
        r.signal ? { cancellationSignal: r.signal, stopWaitingOnCancel: true } : undefined,
      );
    } catch (error) {
      // The turn was cancelled (or the tool timed out): the pipeline's own abort, not the editor's failure.
      if (r.signal?.aborted) throw r.signal.reason instanceof Error ? r.signal.reason : new DOMException('aborted', 'AbortError');
      return { ok: false, error: clientFailure(verb, p, error) };
    }
    const content = (res as { content?: unknown } | null | undefined)?.content;
    if (typeof content !== 'string')
      return { ok: false, error: new FsError('FS_IO', `cannot ${verb} "${p}": the editor's answer has no text (no string "content")`) };
    return { ok: true, content };
  };

  /** The editor's text of `p`, accepted only if `p` is the same file before and after asking and the text holds no secret. */
  const readVerified = async (
    r: FsRequest,
    root: string,
    p: string,
    verb: string,
    linkVerb: string,
    maxBytes: number,
    withDisk = false,
  ): Promise<Verified> => {
    const before = await pinFile(r, root, p, verb, linkVerb);
    try {
      const answer = await ask(r, p, verb);
      if (answer.ok && holdsSecret(answer.content, [...opts.secrets, ...(await hiddenFileSecrets(r.hidden ?? []))])) {
        distrusted.add(p);
        throw secretInBuffer(p);
      }
      const after = await pinFile(r, root, p, verb, linkVerb).catch((e: unknown) => {
        distrusted.add(p);
        throw changedDuringRead(p, e instanceof Error ? e.message : String(e), e);
      });
      let disk: Buffer | undefined;
      try {
        const how = comparePins(before, after);
        if (how === 'moved') {
          distrusted.add(p);
          throw changedDuringRead(p, 'the name now leads to another file');
        }
        if (how === 'touched' || withDisk) disk = await pinnedBytes(after, maxBytes);
        // A rename, a write, an entry added on the way: the text is accepted only if it is the file's own.
        if (how === 'touched' && !(answer.ok && disk?.equals(Buffer.from(answer.content, 'utf8')))) {
          distrusted.add(p);
          throw changedDuringRead(p, 'it or a directory on the way was renamed or changed');
        }
        if (!answer.ok) throw answer.error;
      } finally {
        await after.release();
      }
      const bytes = Buffer.from(answer.content, 'utf8');
      checkReadSize(p, bytes.length, maxBytes);
      checkNotBinary(p, bytes);
      return { text: answer.content, bytes: bytes.length, disk };
    } finally {
      await before.release();
    }
  };

  return (host) => {
    const offs: (() => void)[] = [];
    /** The confined workspace path the editor may be asked for, or undefined (stay local). */
    const ours = (r: FsRequest): { p: string; root: string } | undefined => {
      const p = requestPath(r);
      if (!r.confined || r.confinedTo === undefined || distrusted.has(p)) return undefined;
      return inside(opts.root, p) && inside(r.confinedTo, p) ? { p, root: r.confinedTo } : undefined;
    };
    if (canRead) {
      offs.push(
        host.on(
          'fs/read',
          async (r: FsReadRequest, next) => {
            const at = ours(r);
            if (at === undefined) return next(r);
            const { text, bytes } = await readVerified(r, at.root, at.p, 'read', 'read', r.maxBytes);
            return { path: at.p, text, bytes };
          },
          { name: 'acp-client-fs' },
        ),
      );
    }
    // An edit of the editor's text (a client that takes writes expects its files changed): read
    // from the editor as above, written locally through verified handles. With reading only, an
    // edit is wholly local, like a write.
    if (canRead && canWrite) {
      offs.push(
        host.on(
          'fs/edit',
          async (r: FsEditRequest, next) => {
            const at = ours(r);
            if (at === undefined) return next(r);
            const { text, disk } = await readVerified(r, at.root, at.p, 'read', 'edit', EDIT_MAX_BYTES, true);
            const { before, after, replacements } = keepLineEnds(text, disk?.toString('utf8'), r, at.p);
            await local.write({ ...r, op: 'write', content: after });
            return { path: at.p, before, after, replacements };
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
