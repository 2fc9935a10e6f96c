/**
 * `@path` in a prompt attaches that workspace file: the prompt becomes a user message whose
 * content is the typed text followed by one text block per file, sent through the agent's public
 * API like any prompt, so what the model reads is the recorded `user/message`. A word starting
 * with `@` that names no file stays text (a handle, an email); a file outside the workspace, too
 * big, or not UTF-8 text is refused with a coded error before anything is sent.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { CodedError } from '../../model/coded-error.js';
import type { ContentBlock } from '../../model/message.js';

export const ATTACH_MAX_BYTES = 256 * 1024;

export type AttachErrorCode = 'ATTACH_OUTSIDE_WORKSPACE' | 'ATTACH_TOO_LARGE' | 'ATTACH_NOT_TEXT';
export class AttachError extends CodedError<AttachErrorCode> {
  override name = 'AttachError';
}

const MENTION = /(^|\s)@((?:[^\s\\]|\\ )+)/g;

/** The prompt's content: its text, then each attached file once, in order of mention. */
export function withAttachments(text: string, workspace: string): { content: string | ContentBlock[]; files: string[] } {
  const root = realpathSync(workspace);
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
    if (rel.startsWith('..') || isAbsolute(rel)) {
      throw new AttachError('ATTACH_OUTSIDE_WORKSPACE', `@${written} is outside the workspace (${root}); only workspace files attach`);
    }
    if (files.includes(rel)) continue;
    const size = statSync(real).size;
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
    blocks.push({ type: 'text', text: `<attached file="${rel}">\n${body}${body.endsWith('\n') ? '' : '\n'}</attached>` });
  }
  if (files.length === 0) return { content: text, files };
  return { content: [{ type: 'text', text }, ...blocks], files };
}
