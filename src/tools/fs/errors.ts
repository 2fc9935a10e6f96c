/** Filesystem failures with stable codes, worded for the model that has to act on them. */
import { ToolError } from '../types.js';

export type FsErrorCode =
  | 'FS_NOT_FOUND'
  | 'FS_IS_DIRECTORY'
  | 'FS_NOT_A_DIRECTORY'
  | 'FS_PERMISSION'
  | 'FS_INVALID_PATH'
  | 'FS_PATH_TOO_LONG'
  | 'FS_OUTSIDE_WORKSPACE'
  | 'FS_SYMLINK_ESCAPE'
  | 'FS_SYMLINK_LOOP'
  | 'FS_SANDBOX_DENIED'
  | 'FS_BINARY'
  | 'FS_TOO_LARGE'
  | 'FS_EDIT_NOT_FOUND'
  | 'FS_EDIT_AMBIGUOUS'
  | 'FS_EDIT_NOOP'
  /** A path component became a symbolic link (or moved out) between the check and the open, or changed while an editor read it by name. */
  | 'FS_PATH_CHANGED'
  /** A regular file with more than one name: another name may be outside the workspace. */
  | 'FS_HARD_LINK'
  /** A device, FIFO or socket where a regular file was expected. */
  | 'FS_NOT_A_FILE'
  /** `dsh acp`: the editor's text of a file held one of dsh's secrets (a buffer it loaded through a link). */
  | 'FS_SECRET_IN_BUFFER'
  | 'FS_IO';

export class FsError extends ToolError<FsErrorCode> {
  override name = 'FsError';
  constructor(code: FsErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, undefined, options);
  }
}

const NODE_CODES: Record<string, [FsErrorCode, string]> = {
  ENOENT: ['FS_NOT_FOUND', 'not found'],
  EISDIR: ['FS_IS_DIRECTORY', 'it is a directory, not a file'],
  ENOTDIR: ['FS_NOT_A_DIRECTORY', 'a component of the path is not a directory'],
  EACCES: ['FS_PERMISSION', 'permission denied by the operating system'],
  EPERM: ['FS_PERMISSION', 'operation not permitted by the operating system'],
  EROFS: ['FS_PERMISSION', 'the file system is read-only'],
  ELOOP: ['FS_SYMLINK_LOOP', 'too many levels of symbolic links (or a symbolic link where none is allowed)'],
  ENAMETOOLONG: ['FS_PATH_TOO_LONG', 'the path is too long'],
};

/** Map a Node error from `verb`ing `path` to an FsError; anything unknown becomes FS_IO. */
export function fsErrorFrom(e: unknown, verb: string, path: string): FsError {
  if (e instanceof FsError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' ? NODE_CODES[code] : undefined;
  if (known) return new FsError(known[0], `cannot ${verb} "${path}": ${known[1]}`, { cause: e });
  return new FsError('FS_IO', `cannot ${verb} "${path}": ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}
