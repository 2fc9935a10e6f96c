/**
 * Session titles: a `session/title` event naming the session after its first prompt, so session
 * lists (`dsh sessions`) and clients of `dsh sdk` show something better than an id. Written
 * once, before the first model request, by the same rule as dsh's fallback titles (facts from
 * dsh's logs: the prompt's first five words, at most 40 characters, `source: {kind:'fallback'}`,
 * `messageSeqs` citing the prompt's `user/message`), so a dsh client reading titles sees ours
 * in the same shape. The title is log-only: the model never sees it.
 */
import type { Plugin } from '../agent/context.js';
import type { Session } from '../session/session.js';
import type { UserMessage } from '../model/message.js';

export const TITLE_WORDS = 5;
export const TITLE_MAX_CHARS = 40;

/** The fallback title of a prompt's text, or undefined when it has no words. */
export function fallbackTitle(text: string): string | undefined {
  const words = text.split(/\s+/u).filter((w) => w !== '');
  if (words.length === 0) return undefined;
  // Code points, not UTF-16 units: a title never ends in half a surrogate pair.
  return Array.from(words.slice(0, TITLE_WORDS).join(' ')).slice(0, TITLE_MAX_CHARS).join('').trimEnd();
}

function promptText(m: UserMessage): string {
  return m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

function firstPrompt(session: Session): { seq: number; text: string } | undefined {
  for (const m of session.eventsOfType(['user/message'])) {
    if (m.data.source.kind !== 'user') continue;
    return { seq: m.seq, text: promptText(m.data) };
  }
  return undefined;
}

/** Writes the session's title before its first model request (nothing when it has one). */
export function sessionTitle(): Plugin {
  return (host) => {
    // Once titled (or found titled), later requests skip the log walk.
    let titled = host.session.lastOfType('session/title') !== undefined;
    return host.on(
      'agent/request',
      (p, next) => {
        if (titled) return next(p);
        const prompt = firstPrompt(host.session);
        const title = prompt && fallbackTitle(prompt.text);
        if (prompt && title !== undefined) {
          host.session.append('session/title', { title, messageSeqs: [prompt.seq], source: { kind: 'fallback' } });
          titled = true;
        }
        return next(p);
      },
      { name: 'session-title' },
    );
  };
}
