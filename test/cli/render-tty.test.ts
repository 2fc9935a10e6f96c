/**
 * `dsh run`'s progress on a terminal: with the terminal renderers on (stderr is a TTY), tool calls
 * are drawn by kind and redrawn in place with their outcome, reasoning collapses to one line;
 * into a pipe the plain lines stay as they were. The session is real; only the streams are
 * captured.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/session/session.js';
import { LiveRenderer } from '../../src/cli/agent/render.js';
import { Output, type Io } from '../../src/cli/output.js';

function io(tty: boolean): { io: Io; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const o = new Output({ write: (s: string) => (out += s), isTTY: tty, columns: 60 }, false);
  const e = new Output({ write: (s: string) => (err += s), isTTY: tty, columns: 60 }, false);
  return { io: { out: o, err: e, env: {} }, out: () => out, err: () => err };
}

function play(s: Session): void {
  const turn = 1;
  const step = 1;
  const chunk = (c: unknown): void => void s.append('assistant/chunk', { turn, step, chunk: c } as never);
  s.append('turn/start', { turn });
  s.append('step/start', { turn, step });
  chunk({ type: 'block-start', index: 0, blockType: 'reasoning' });
  chunk({ type: 'reasoning-delta', index: 0, text: 'Check the tests first.' });
  chunk({ type: 'block-end', index: 0, block: { type: 'reasoning', text: 'Check the tests first.' } });
  chunk({ type: 'block-start', index: 1, blockType: 'text' });
  chunk({ type: 'text-delta', index: 1, text: 'Running them.' });
  chunk({ type: 'block-end', index: 1, block: { type: 'text', text: 'Running them.' } });
  const call = s.append('tool/call', { turn, step, callId: 'c1', name: 'bash', arguments: JSON.stringify({ command: 'npm test' }) });
  s.append(
    'tool/result',
    {
      turn,
      step,
      message: {
        id: 'm1',
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok 1\nok 2\n' }] }],
        source: { kind: 'tool', callId: 'c1' },
      },
      meta: { exitCode: 0, signal: null, timedOut: false },
    } as never,
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] } as never,
  );
}

describe('dsh run progress', () => {
  it('on a terminal: reasoning collapsed, a call drawn then redrawn in place with its outcome', async () => {
    let t = 1_800_000_000_000;
    const s = Session.create({ id: 'tty', header: { cwd: '/w' }, clock: () => (t += 500) });
    const c = io(true);
    const r = new LiveRenderer(c.io, { mode: 'stream' });
    await r.enableRich();
    r.attach(s);
    play(s);
    expect(c.out()).toBe('Running them.\n');
    expect(c.err()).toBe(
      [
        '▸ thinking…\n',
        // Redrawn in place: up one line, clear to the end of the screen.
        '\x1b[1A\x1b[J▸ thought · 1.0s · 1 line: Check the tests first.\n',
        '● bash npm test\n  running…\n',
        '\x1b[2A\x1b[J● bash npm test\n  exit 0 · 0.5s\n  │ ok 1\n  │ ok 2\n',
      ].join(''),
    );
  });

  it('into a pipe: the plain lines, as before', async () => {
    let t = 1_800_000_000_000;
    const s = Session.create({ id: 'pipe', header: { cwd: '/w' }, clock: () => (t += 500) });
    const c = io(false);
    const r = new LiveRenderer(c.io, { mode: 'stream' });
    r.attach(s);
    play(s);
    // Into a pipe the answer is left as the model wrote it (no line end added).
    expect(c.out()).toBe('Running them.');
    expect(c.err()).toBe('→ bash {"command":"npm test"}\n← bash ok\n');
  });
});
