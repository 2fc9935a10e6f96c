/**
 * Full redraws on the chat screen (issue 15 first review, 12): pi-tui's full redraw clears the
 * terminal's scrollback (`\e[3J`), erasing the shell's lines above the chat. The screen must not
 * ask for one where pi-tui lets it choose: here, a screen getting shorter, which pi-tui redraws
 * whole when PI_CLEAR_ON_SHRINK=1 is in the environment (a pi user's setting).
 */
import { describe, expect, it } from 'vitest';
import { openChat, say, until } from './support/chat-pty.js';

const CLEAR_SCROLLBACK = '\x1b[3J';
const clears = (raw: string): number => raw.split(CLEAR_SCROLLBACK).length - 1;

describe('chat screen: no scrollback wipe where the screen can avoid one', () => {
  it('a shorter screen (the completion list closing) is not a full redraw, even with PI_CLEAR_ON_SHRINK=1', async () => {
    const { c } = await openChat([say(['the answer ', 'to hi'])], {
      env: { PI_CLEAR_ON_SHRINK: '1', NO_COLOR: '1' },
      size: { cols: 80, rows: 30 },
    });
    const before = clears(c.raw());
    c.write('/res');
    await until(() => /→ resume/.test(c.screen()), 'the completion list');
    c.write('\x7f\x7f\x7f\x7f');
    await until(() => !/→ resume/.test(c.screen()), 'the list to close');
    await new Promise((r) => setTimeout(r, 300));
    expect(clears(c.raw()) - before).toBe(0);

    // pi-tui's own: a width change is a full redraw, scrollback cleared, and the whole transcript
    // written again (what docs/cli.md says: only the shell's lines above the chat are lost).
    c.write('hi\r');
    await c.waitFor(/the answer to hi/);
    c.resize(60, 30);
    await until(() => clears(c.raw()) - before === 1, 'the full redraw of the resize');
    await new Promise((r) => setTimeout(r, 300));
    expect(c.text()).toMatch(/› hi[\s\S]*the answer to hi/);
  });
});
