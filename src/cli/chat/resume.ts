/**
 * The sessions `dsh chat --resume` (no id) and `/resume` offer: this workspace's stored sessions,
 * newest first, each with its title, age, turns, workspace and first prompt, from the same
 * listing `dsh sessions` reads (the header and a window at each end of each log, cached while a
 * log is unchanged), so opening the list costs no full read of any log.
 */
import type { Store } from '../../store/index.js';
import type { PickItem } from '../../terminal/chat/picker.js';
import { listRows, type SessionSummary } from '../sessions.js';
import { flatten, plural } from '../text.js';

/** At most this many sessions are offered (the newest). */
export const RESUME_LIMIT = 50;

/** `just now`, `5m ago`, `3h ago`, `2d ago`. */
export function age(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** One session as an entry of the list: text folded to one line, not escaped (the picker escapes what it draws, once). */
export function sessionItem(r: SessionSummary, now: number): PickItem {
  const title = r.title ?? r.prompt ?? '(no prompt yet)';
  const parts = [age(r.modifiedAt, now), r.turns === null ? 'turns ?' : plural(r.turns, 'turn'), r.cwd ?? '?', r.id.slice(0, 8)];
  if (r.prompt !== null && r.prompt !== r.title) parts.push(`first prompt: ${r.prompt}`);
  return { value: r.id, title: flatten(title, 200), detail: flatten(parts.join(' · '), 400) };
}

/**
 * This workspace's sessions, newest first, without `exclude` (the one the chat is in) and
 * without sessions that never got a prompt (nothing to go back to).
 */
export async function recentSessions(store: Store, cwd: string, exclude?: string, now = Date.now()): Promise<PickItem[]> {
  const { rows } = await listRows(store, (ss) => ss.filter((s) => s.header.cwd === cwd && s.id !== exclude));
  return rows
    .filter((r) => !(r.turns === 0 && r.prompt === null))
    .sort((a, b) => b.modifiedAt - a.modifiedAt)
    .slice(0, RESUME_LIMIT)
    .map((r) => sessionItem(r, now));
}
