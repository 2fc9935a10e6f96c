/**
 * `@path` in a prompt attaches that workspace file: the prompt becomes a user message whose
 * content is the typed text followed by one text block per file, sent through the agent's public
 * API like any prompt, so what the model reads is the recorded `user/message`. A word starting
 * with `@` that names no file stays text (a handle, an email); a file outside the workspace, too
 * big, not UTF-8 text, or one of dsh's config files holding a key (the files the tools may not read,
 * under any name) is refused with a coded error before anything is sent.
 *
 * The frame the model reads must be unambiguous whatever the file holds (`frame`): the file name
 * is an escaped attribute, and the closing tag is one the body does not contain, so a file
 * holding `</attached>` cannot end its frame early and pass the rest off as the user's words.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { CodedError } from '../../model/coded-error.js';
import type { ContentBlock } from '../../model/message.js';
import { isHiddenFile } from '../../tools/fs/hidden.js';

export const ATTACH_MAX_BYTES = 256 * 1024;

export type AttachErrorCode = 'ATTACH_OUTSIDE_WORKSPACE' | 'ATTACH_TOO_LARGE' | 'ATTACH_NOT_TEXT' | 'ATTACH_HIDDEN';
export class AttachError extends CodedError<AttachErrorCode> {
  override name = 'AttachError';
}

const MENTION = /(^|\s)@((?:[^\s\\]|\\ )+)/g;

/** `s` as an XML attribute value: `& < > "` and every control character as a character reference. */
function attribute(s: string): string {
  return s.replace(/[&<>"\u0000-\u001f\u007f-\u009f]/g, (c) => {
    const named: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
    return named[c] ?? `&#x${c.charCodeAt(0).toString(16)};`;
  });
}

/**
 * One file as the model reads it: `<attached file="NAME">`, the body, `</attached>`. When the
 * body holds `</attached` (any case), the tag is numbered, `<attached-2 …>…</attached-2>`, with
 * the first number whose closing tag the body does not hold: the frame ends at the first closing
 * tag after it, always, and the same file gets the same frame every time.
 */
export function frame(name: string, body: string): string {
  const lower = body.toLowerCase();
  let tag = 'attached';
  for (let n = 2; lower.includes(`</${tag}`); n++) tag = `attached-${n}`;
  return `<${tag} file="${attribute(name)}">\n${body}${body.endsWith('\n') ? '' : '\n'}</${tag}>`;
}

/** The prompt's content: its text, then each attached file once, in order of mention. */
export function withAttachments(
  text: string,
  workspace: string,
  hidden: readonly string[] = [],
): { content: string | ContentBlock[]; files: string[] } {
  const root = realpathSync(workspace);
  // dsh's config files that hold a key (the tools' hidden files): never sent, whoever asks.
  const hiddenReal = new Set(
    hidden.flatMap((h) => {
      try {
        return [realpathSync(h)];
      } catch {
        return [];
      }
    }),
  );
  const files: string[] = [];
  const blocks: ContentBlock[] = [];
  for (const m of text.matchAll(MENTION)) {
    const written = m[2]!.replace(/\\ /g, ' ').replace(/[.,;:!?)]+$/, '');
    const abs = resolve(root, written);
    let real: string;
    try {
      real = realpathSync(abs);
      if (!statSync(real).isFile()) continue;
    } catch {
      continue;
    }
    const rel = relative(root, real);
    // `..` or `../x`, not a workspace file named `..notes`.
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new AttachError('ATTACH_OUTSIDE_WORKSPACE', `@${written} is outside the workspace (${root}); only workspace files attach`);
    }
    if (files.includes(rel)) continue;
    const st = statSync(real);
    if (hiddenReal.has(real) || isHiddenFile(hidden, st))
      throw new AttachError('ATTACH_HIDDEN', `@${written} is a dsh config file holding a key; it never attaches`);
    const size = st.size;
    if (size > ATTACH_MAX_BYTES) {
      throw new AttachError('ATTACH_TOO_LARGE', `@${written} is ${size} bytes; files up to ${ATTACH_MAX_BYTES} bytes attach`);
    }
    const bytes = readFileSync(real);
    let body: string;
    try {
      body = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      body = '\0';
    }
    if (body.includes('\0')) throw new AttachError('ATTACH_NOT_TEXT', `@${written} is not UTF-8 text; only text files attach`);
    files.push(rel);
    blocks.push({ type: 'text', text: frame(rel, body) });
  }
  if (files.length === 0) return { content: text, files };
  return { content: [{ type: 'text', text }, ...blocks], files };
}
