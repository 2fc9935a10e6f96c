/**
 * The tool-result codes that mean "refused before it ran": a deny rule or policy hook (`DENIED`,
 * pipeline.ts), the file sandbox (`FS_SANDBOX_DENIED`) and a network sandbox that cannot be had
 * (`SANDBOX_NETWORK_UNAVAILABLE`, permissions/plugin.ts), and an approval rejected, cancelled or
 * impossible with no one to ask (`APPROVAL_*`, pipeline.ts). The tools layer writes these codes,
 * so it owns the list; `dsh run --fail-on-denied` counts the results that carry one.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'DENIED',
  'FS_SANDBOX_DENIED',
  'SANDBOX_NETWORK_UNAVAILABLE',
  'APPROVAL_REJECTED',
  'APPROVAL_CANCELLED',
  'APPROVAL_UNAVAILABLE',
]);
