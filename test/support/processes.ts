/**
 * Processes as Linux lists them in /proc, for tests that must find what a command started (to
 * check it is gone, or to end it) by a token in its command line (`exec -a TOKEN sleep …`).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  argv: string[];
}

/** Every process but this one whose command line mentions `token`. */
export function processesWith(token: string): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').slice(0, -1);
      if (argv.some((a) => a.includes(token))) found.push({ pid: Number(name), argv });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** SIGKILL `pid` (a process group when negative); nothing when it is gone already. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
