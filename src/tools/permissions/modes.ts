/** The vocabulary of permissions, shared by the shell and filesystem seams and the policy plugin. */

/** What file effects are allowed (dsh `sandbox/mode`): governs writes, not reads; the network is a separate switch. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';
export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access'];

/** When to ask a human (dsh `approval/policy`). */
export type ApprovalPolicy = 'ask' | 'never';
export const APPROVAL_POLICIES: readonly ApprovalPolicy[] = ['ask', 'never'];

/**
 * How completely a mode is enforced for one run: `full` (a sandbox backend enforces it, or the
 * mode restricts nothing), `partial` (the mode applies to file tools, but shell commands ran
 * without a sandbox because none is usable on this machine).
 */
export type SandboxEnforcement = 'full' | 'partial';

export interface SandboxReport {
  mode: SandboxMode;
  enforcement: SandboxEnforcement;
  backend?: 'bubblewrap';
  /** Why enforcement is partial, in words a user can act on. */
  reason?: string;
  /** The mode configured for the session, when an approved call ran under a wider one. */
  escalatedFrom?: SandboxMode;
  /** Present only when commands run without a network (`--no-network`, `sandbox.network: false`). */
  network?: 'disabled';
}
