/**
 * Session modes: the sandbox and approval presets an editor shows as a mode picker. A mode is a
 * (sandbox mode, approval policy) pair, the choices `--sandbox` and `--approval` make on the
 * command line; every pair is offered, so whatever the config put in force is one of them and the
 * picker never misstates it. Which pair is in force is read from the log (the latest
 * `sandbox/mode` and `approval/policy` events, which the permissions plugin writes as it starts).
 */
import type { SessionMode, SessionModeState } from '@agentclientprotocol/sdk/unstable';
import type { Session } from '../session/session.js';
import { APPROVAL_POLICIES, SANDBOX_MODES, type ApprovalPolicy, type SandboxMode } from '../tools/permissions/modes.js';
import { AcpError } from './errors.js';

export interface Policy {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
}

const SANDBOX_TEXT: Record<SandboxMode, { name: string; text: string }> = {
  'read-only': { name: 'Read only', text: 'no file changes; commands run in a read-only sandbox' },
  'workspace-write': { name: 'Workspace', text: 'edits and commands inside the workspace sandbox' },
  'danger-full-access': { name: 'Full access', text: 'commands run without a sandbox (file tools still stay in the workspace)' },
};

const APPROVAL_TEXT: Record<ApprovalPolicy, { name: string; text: string }> = {
  ask: { name: 'asks', text: 'asks before anything the sandbox does not contain' },
  never: { name: 'never asks', text: 'never asks: whatever would need approval is refused' },
};

export function modeId(p: Policy): string {
  return `${p.sandbox}/${p.approval}`;
}

export const MODES: readonly (SessionMode & { policy: Policy })[] = SANDBOX_MODES.flatMap((sandbox) =>
  APPROVAL_POLICIES.map((approval) => ({
    id: modeId({ sandbox, approval }),
    name: `${SANDBOX_TEXT[sandbox].name}, ${APPROVAL_TEXT[approval].name}`,
    description: `${SANDBOX_TEXT[sandbox].text}; ${APPROVAL_TEXT[approval].text}`,
    policy: { sandbox, approval },
  })),
);

/** The policy in force, from the log (the permissions plugin's latest events). */
export function policyInLog(session: Session): Policy | undefined {
  let sandbox: SandboxMode | undefined;
  let approval: ApprovalPolicy | undefined;
  for (const e of session.eventsOfType(['sandbox/mode', 'approval/policy'])) {
    if (e.type === 'sandbox/mode' && (SANDBOX_MODES as readonly string[]).includes(e.data.mode)) sandbox = e.data.mode as SandboxMode;
    if (e.type === 'approval/policy') approval = e.data.policy;
  }
  return sandbox && approval ? { sandbox, approval } : undefined;
}

export function modeState(current: Policy): SessionModeState {
  return {
    currentModeId: modeId(current),
    availableModes: MODES.map(({ id, name, description }) => ({ id, name, description: description ?? null })),
  };
}

export function policyForMode(id: string): Policy {
  const m = MODES.find((x) => x.id === id);
  if (!m)
    throw new AcpError(
      'UNKNOWN_MODE',
      `unknown mode ${JSON.stringify(id)}; the modes are ${MODES.map((x) => x.id).join(', ')}`,
      '$.modeId',
    );
  return m.policy;
}
