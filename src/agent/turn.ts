/**
 * One turn. It opens (`turn/start`) before any input is claimed and closes (`turn/end`, from a
 * `finally`, so every turn is balanced) when no work is owed:
 *
 *   turn/start → claim inbox → agent/pre-step → step/start → user/message… → the step
 *   (./step.ts) → step/end → (more steps while tools ran or input is waiting)
 *   → agent/turn-stopping → turn/end
 *
 * A cancel ends it `aborted` with the cause; any other failure ends it `error` with the failure.
 */
import { toLlmFailure } from '../model/failure.js';
import type { AgentCancelCause, InboxTarget, TurnEndReason } from '../session/events.js';
import { runStep, type LoopDriver, type StepOutcome } from './step.js';
import './hooks.js';

function isCancelCause(v: unknown): v is AgentCancelCause {
  const k = (v as { kind?: unknown } | null)?.kind;
  return k === 'user' || k === 'parent' || k === 'disposed' || (k === 'hook' && typeof (v as { reason?: unknown }).reason === 'string');
}

export async function runTurn(driver: LoopDriver, signal: AbortSignal): Promise<void> {
  const agent = driver.agent;
  const s = agent.session;
  const turn = s.trace.lastTurn + 1;
  s.append('turn/start', { turn });
  let reason: TurnEndReason | undefined;
  let step = 0;
  let maxTokensHit = false;
  let wouldEnd: TurnEndReason | undefined;
  let target: InboxTarget = 'next-turn';
  try {
    for (;;) {
      signal.throwIfAborted();
      const claimed = agent.inbox.claim(target, turn);
      driver.claimed(); // a claim takes all of next-step: any pending steer is served
      const decision = await agent.bus.waterfall('agent/pre-step', { agent, messages: claimed, turn, step: step + 1, signal }, (p) => ({
        kind: 'enter' as const,
        messages: p.messages,
      }));
      signal.throwIfAborted();
      if (decision.kind === 'reject') {
        reason = { kind: 'blocked' };
        break;
      }
      const entered = decision.messages;
      if (entered.length === 0) {
        // The first proposal rewritten to nothing: a turn with no step still closes, so the
        // attempt is on record. A later empty batch just means the turn was about to end.
        if (step === 0) {
          reason = { kind: 'completed' };
          break;
        }
        if (wouldEnd) {
          reason = wouldEnd;
          break;
        }
      }
      step += 1;
      s.append('step/start', { turn, step });
      let outcome: StepOutcome;
      try {
        for (const m of entered) s.append('user/message', m, { surfaceOp: 'append' });
        outcome = await runStep(driver, turn, step, signal);
      } finally {
        s.append('step/end', { turn, step });
      }
      signal.throwIfAborted();
      if (outcome === 'max-tokens') maxTokensHit = true;
      wouldEnd = outcome === 'continue' ? undefined : maxTokensHit ? { kind: 'max-tokens' } : { kind: 'completed' };
      if (wouldEnd && agent.inbox.nextStep.length === 0) await agent.bus.serial('agent/turn-stopping', { agent, turn, signal });
      if (wouldEnd && agent.inbox.nextStep.length === 0) {
        reason = wouldEnd;
        break;
      }
      target = 'next-step';
    }
  } catch (error) {
    if (signal.aborted) {
      reason = { kind: 'aborted', reason: isCancelCause(signal.reason) ? signal.reason : { kind: 'user' } };
    } else {
      reason = { kind: 'error', error: toLlmFailure(error) };
      agent.bus.emit('agent/error', { agent, turn, step, error });
    }
  } finally {
    // Any error, not only an adapter's (which already took out its own secrets), may quote one:
    // a throwing hook, a tool pipeline, a plugin; so may a hook's cancel reason.
    if (reason) reason = agent.redactRecord(reason);
    s.append('turn/end', { turn, reason: reason ?? { kind: 'error', error: { message: 'turn ended without a reason', code: 'UNKNOWN' } } });
  }
}
