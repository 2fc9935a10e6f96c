/**
 * Completion in the chat editor (Tab, or as `/` and `@` are typed). Slash commands and plain
 * paths are pi-tui's own (`CombinedAutocompleteProvider`); `@path`, a file to attach
 * (attach.ts), is completed here from the workspace's files. pi-tui completes `@` only through
 * the `fd` binary, which a user may not have; this walks the workspace with the tools' own walker
 * (`walkFiles`: `.gitignore` honoured, VCS folders and symbolic links skipped), so what is offered
 * is what `glob` and `grep` see. The list is kept a few seconds: typing a prefix asks again at
 * each key.
 *
 * A completed mention is written the way attach.ts reads it back: a space in the path as `\ `.
 * A path that a mention cannot spell (other whitespace, a backslash) is not offered.
 */
import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import {
  type AutocompleteItem,
  type AutocompleteProvider,
  type AutocompleteSuggestions,
  CombinedAutocompleteProvider,
  type SlashCommand,
} from '@mariozechner/pi-tui';
import { walkFiles } from '../../tools/fs/walk.js';

/** Files listed at most (a huge tree stops there: the first ones, breadth first). */
const MAX_FILES = 20_000;
/** Suggestions shown at most. */
const MAX_ITEMS = 20;
/** How long a listing is reused before the workspace is walked again. */
const FRESH_MS = 5_000;

/** An `@` mention being typed: at the start or after whitespace, up to the cursor. */
const AT_TOKEN = /(?:^|\s)(@(?:[^\s\\]|\\ )*)$/;

/**
 * A workspace path as a mention spells it, or undefined when it cannot be spelled: a backslash or
 * whitespace other than a space, or an ending attach.ts reads as punctuation after the mention.
 */
function mention(path: string): string | undefined {
  if (path.includes('\\') || /\s/.test(path.replace(/ /g, '')) || /[.,;:!?)]$/.test(path)) return undefined;
  return path.replace(/ /g, '\\ ');
}

/**
 * Files matching `query` (case-insensitive), best first: the path starts with it, then the file
 * name does, then the path holds it anywhere; shorter paths first within each.
 */
export function rankFiles(files: readonly string[], query: string): string[] {
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const path of files) {
    const p = path.toLowerCase();
    const score = p.startsWith(q) ? 0 : posix.basename(p).startsWith(q) ? 1 : p.includes(q) ? 2 : -1;
    if (score >= 0) scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return scored.map((s) => s.path);
}

export class ChatCompletion implements AutocompleteProvider {
  private readonly inner: CombinedAutocompleteProvider;
  private listing: { at: number; files: Promise<string[]> } | undefined;

  constructor(
    commands: SlashCommand[],
    private readonly cwd: string,
  ) {
    this.inner = new CombinedAutocompleteProvider(commands, cwd, null);
  }

  async getSuggestions(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    options: { signal: AbortSignal; force?: boolean },
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? '').slice(0, cursorCol);
    const token = AT_TOKEN.exec(before)?.[1];
    if (token === undefined) return this.inner.getSuggestions(lines, cursorLine, cursorCol, options);
    const files = await this.files();
    if (options.signal.aborted) return null;
    const items: AutocompleteItem[] = [];
    for (const path of rankFiles(files, token.slice(1).replace(/\\ /g, ' '))) {
      const spelled = mention(path);
      if (spelled === undefined) continue;
      items.push({ value: `@${spelled}`, label: path });
      if (items.length >= MAX_ITEMS) break;
    }
    return items.length > 0 ? { items, prefix: token } : null;
  }

  applyCompletion(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    item: AutocompleteItem,
    prefix: string,
  ): { lines: string[]; cursorLine: number; cursorCol: number } {
    if (!prefix.startsWith('@')) return this.inner.applyCompletion(lines, cursorLine, cursorCol, item, prefix);
    const line = lines[cursorLine] ?? '';
    const before = line.slice(0, cursorCol - prefix.length);
    const after = line.slice(cursorCol);
    // A space after the mention ends it (and is where the cursor goes), unless one is there already.
    const gap = after.startsWith(' ') ? '' : ' ';
    const out = [...lines];
    out[cursorLine] = `${before}${item.value}${gap}${after}`;
    return { lines: out, cursorLine, cursorCol: before.length + item.value.length + 1 };
  }

  shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
    return this.inner.shouldTriggerFileCompletion(lines, cursorLine, cursorCol);
  }

  /** The workspace's files (relative, `/`-separated), walked at most every few seconds. */
  private files(): Promise<string[]> {
    const now = Date.now();
    if (this.listing === undefined || now - this.listing.at > FRESH_MS) this.listing = { at: now, files: listFiles(this.cwd) };
    return this.listing.files;
  }
}

async function listFiles(cwd: string): Promise<string[]> {
  const out: string[] = [];
  try {
    const root = realpathSync(cwd);
    for await (const f of walkFiles(root, { root, gitignore: true })) {
      out.push(f.path);
      if (out.length >= MAX_FILES) break;
    }
  } catch {
    // An unreadable workspace offers nothing; the prompt can still name a file by hand.
  }
  return out;
}
