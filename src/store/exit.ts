/**
 * Last-chance flushing. On `exit` (a normal end, `process.exit`, or an uncaught exception that
 * ends the process) every open log writes its queue and fsyncs synchronously, then releases its
 * lock so the next process need not take over a stale one. On `uncaughtExceptionMonitor` the logs
 * are flushed but kept open: a handler elsewhere may keep the process alive.
 *
 * Signals are not intercepted: installing a SIGINT/SIGTERM handler would change how the host
 * application dies. An application that handles them can call `SessionStore.flushAllSync()`.
 */
export interface ExitParticipant {
  flushSync(): void;
  releaseSync(): void;
}

const live = new Set<ExitParticipant>();
let installed = false;

function onExit(): void {
  for (const p of [...live]) {
    try {
      p.flushSync();
    } finally {
      p.releaseSync();
    }
  }
}

function onUncaught(): void {
  for (const p of live) {
    try {
      p.flushSync();
    } catch {
      // keep flushing the others
    }
  }
}

export function registerExit(p: ExitParticipant): void {
  live.add(p);
  if (!installed) {
    installed = true;
    process.on('exit', onExit);
    process.on('uncaughtExceptionMonitor', onUncaught);
  }
}

export function unregisterExit(p: ExitParticipant): void {
  live.delete(p);
  if (installed && live.size === 0) {
    installed = false;
    process.off('exit', onExit);
    process.off('uncaughtExceptionMonitor', onUncaught);
  }
}

/** Flush every open log synchronously (for an application's own signal handlers). */
export function flushAllSync(): void {
  onUncaught();
}
