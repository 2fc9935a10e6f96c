/**
 * Prompt history per workspace, kept under the dsh home (never in the workspace, which is the
 * user's repository): one JSON string per line, appended as prompts are sent. A line that does
 * not parse is skipped (the file is a convenience, not a record: the log is the record).
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const HISTORY_KEEP = 500;

export class PromptHistory {
  constructor(readonly path: string) {}

  /** Oldest first, at most `HISTORY_KEEP`; none when the file is absent or unreadable. */
  load(): string[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const v = JSON.parse(line) as unknown;
        if (typeof v === 'string' && v.trim() !== '') out.push(v);
      } catch {
        // a torn or edited line
      }
    }
    return out.slice(-HISTORY_KEEP);
  }

  /** Throws the file system's error; the caller says it once and goes on. */
  add(prompt: string): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    appendFileSync(this.path, `${JSON.stringify(prompt)}\n`, { mode: 0o600 });
  }
}
