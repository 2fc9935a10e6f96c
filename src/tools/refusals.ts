/**
 * The tool-result codes that mean "refused before it ran": a deny rule or policy hook (`DENIED`,
 * pipeline.ts), the file sandbox (`FS_SANDBOX_DENIED`), workspace confinement (a path outside it,
 * a link leading out of it, a hard link to a file elsewhere: `FS_OUTSIDE_WORKSPACE`,
 * `FS_SYMLINK_ESCAPE`, `FS_HARD_LINK`), an editor read `dsh acp` would not trust
 * (`FS_PATH_CHANGED`, `FS_SECRET_IN_BUFFER`), a network sandbox that cannot be had
 * (`SANDBOX_NETWORK_UNAVAILABLE`, permissions/plugin.ts), and an approval rejected, cancelled or
 * impossible with no one to ask (`APPROVAL_*`, pipeline.ts). The tools layer writes these codes,
 * so it owns the list; `dsh run --fail-on-denied` counts the results that carry one.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'DENIED',
  'FS_SANDBOX_DENIED',
  'FS_OUTSIDE_WORKSPACE',
  'FS_SYMLINK_ESCAPE',
  'FS_HARD_LINK',
  'FS_PATH_CHANGED',
  'FS_SECRET_IN_BUFFER',
  'SANDBOX_NETWORK_UNAVAILABLE',
  'APPROVAL_REJECTED',
  'APPROVAL_CANCELLED',
  'APPROVAL_UNAVAILABLE',
]);
