/**
 * The real `dsh chat` binary in a real pseudo-terminal (node-pty's prebuilt binaries), its output
 * fed to a headless xterm so tests read the screen as a person sees it: rows of text after every
 * cursor move, erase and redraw, not the byte stream.
 */
import pty from '@homebridge/node-pty-prebuilt-multiarch';
import xterm from '@xterm/headless';
import { repoRoot } from '../../support/shared.js';
import { builtBin } from './run.js';

export interface PtyDsh {
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /** Every row of the buffer (scrollback and screen), right-trimmed, joined by newlines. */
  text(): string;
  /** The visible screen only. */
  screen(): string;
  /**
   * Resolves with the buffer text once `re` matches it `count` times (default once). The buffer
   * is not append-only (the screen redraws its bottom part), so tests count matches, never offsets.
   */
  waitFor(re: RegExp, opts?: { timeoutMs?: number; count?: number }): Promise<string>;
  count(re: RegExp): number;
  /** Bytes written by dsh so far. */
  readonly bytes: number;
  /** Everything dsh wrote, as written (escapes and all): what styles reached the terminal. */
  raw(): string;
  done: Promise<number>;
  kill(signal?: string): void;
}

export function spawnPtyDsh(args: readonly string[], env: Record<string, string>, size = { cols: 80, rows: 24 }): PtyDsh {
  const full: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) full[k] = v;
  delete full.DEEPSEEK_API_KEY;
  delete full.DSH_MODEL;
  delete full.FORCE_COLOR;
  delete full.DSH_DEBUG;
  Object.assign(full, { TERM: 'xterm-256color' }, env);
  return spawnPty(process.execPath, [builtBin(), ...args], full, size, repoRoot);
}

/** Any program in a real pty read through a headless xterm (a shell, for completion tests). */
export function spawnPty(
  file: string,
  args: readonly string[],
  env: Record<string, string>,
  size: { cols: number; rows: number },
  cwd: string,
): PtyDsh {
  const term = new xterm.Terminal({ cols: size.cols, rows: size.rows, scrollback: 5000, allowProposedApi: true });
  const child = pty.spawn(file, [...args], {
    // node-pty sets TERM to this name, whatever `env` says: a test's TERM (dumb) must win.
    name: env.TERM ?? 'xterm-256color',
    cols: size.cols,
    rows: size.rows,
    cwd,
    env,
  });
  let bytes = 0;
  let pendingWrites = 0;
  const chunks: string[] = [];
  child.onData((d) => {
    bytes += d.length;
    chunks.push(d);
    pendingWrites++;
    term.write(d, () => pendingWrites--);
  });
  // The terminal answers dsh's queries (cursor position, keyboard protocol) as a real one would.
  term.onData((d) => child.write(d));
  const done = new Promise<number>((resolve) => child.onExit((e) => resolve(e.exitCode)));
  const rows = (from: number, to: number): string => {
    const b = term.buffer.active;
    const out: string[] = [];
    for (let i = from; i < to; i++) out.push(b.getLine(i)?.translateToString(true) ?? '');
    return out.join('\n');
  };
  const text = (): string => rows(0, term.buffer.active.length).replace(/\n+$/, '');
  const screen = (): string => rows(term.buffer.active.viewportY, term.buffer.active.viewportY + term.rows);
  let exited = false;
  void done.then(() => (exited = true));
  return {
    write: (d) => child.write(d),
    resize: (c, r) => {
      term.resize(c, r);
      child.resize(c, r);
    },
    text,
    screen,
    get bytes() {
      return bytes;
    },
    raw: () => chunks.join(''),
    count: (re) => countIn(text(), re),
    async waitFor(re, opts = {}) {
      const until = Date.now() + (opts.timeoutMs ?? 20_000);
      const want = opts.count ?? 1;
      for (;;) {
        const t = text();
        const ok = countIn(t, re) >= want;
        if (pendingWrites === 0 && ok) return t;
        if (Date.now() > until || (exited && pendingWrites === 0 && !ok))
          throw new Error(`timed out waiting for ${re} (×${want}) on the pty screen:\n${t.split('\n').slice(-40).join('\n')}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    done,
    kill: (signal) => child.kill(signal),
  };
}

function countIn(text: string, re: RegExp): number {
  return text.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))?.length ?? 0;
}
