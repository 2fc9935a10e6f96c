/**
 * dsh's newer log formats (1–4) through the CLI (issue 11 item 4): every log command reads the
 * real V2–V4 logs, and `dsh log convert --to 0` writes a format 0 log that checks and reads the
 * same (messages as derived from the source).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runMain } from './support/inproc.js';
import { tempDir } from './support/agent.js';
import { nextLogs } from '../support/next-logs.js';
import { describeShared } from '../support/shared.js';

const logs = nextLogs();

describeShared('dsh log on formats 2–4', () => {
  const files = [...logs.keys()];
  const replays = new Map<string, number>();
  it.each(files)('%s: check, show, messages, and convert --to 0 (which checks and derives the same messages)', async (f) => {
    const path = logs.get(f)!;
    const check = await runMain(['log', 'check', path]);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toMatch(/FORMAT_CONVERTED/);
    const show = await runMain(['log', 'show', path]);
    expect(show.code, show.stderr).toBe(0);
    const messages = await runMain(['log', 'messages', '--json', path]);
    expect(messages.code, messages.stderr).toBe(0);

    const replay = await runMain(['replay', path]);
    expect(`${replay.stdout}${replay.stderr}`).not.toMatch(/internal error|TypeError|RangeError/);
    replays.set(f, replay.code);

    const out = join(tempDir(), 'session.jsonl');
    const conv = await runMain(['log', 'convert', '--to', '0', path, '-o', out]);
    expect(conv.code, conv.stderr).toBe(0);
    expect(conv.stderr).toMatch(/written as format 0/);
    const header = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]!) as { version: number };
    expect(header.version).toBe(0);
    const again = await runMain(['log', 'check', out]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).not.toMatch(/FORMAT_CONVERTED/);
    const messages0 = await runMain(['log', 'messages', '--json', out]);
    expect(messages0.stdout).toBe(messages.stdout);
  });

  it('dsh replay re-runs every one of them to the recorded end', () => {
    // The python-sdk snapshots give every message the id {{messageId}}; read as it is, two
    // pending inbox messages share an id and replay stops (DUPLICATE_MESSAGE_ID). The reader
    // gives each distinct message its own id (test/session/next-formats.test.ts).
    expect(Object.fromEntries([...replays].filter(([, c]) => c !== 0))).toEqual({});
    expect(replays.size).toBe(files.length);
  });

  it('convert refuses a format it does not write, and -o naming the input', async () => {
    const path = logs.get(files[0]!)!;
    const bad = await runMain(['log', 'convert', '--to', '4', path]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/writes session format 0 only \[USAGE\]/);
    const same = await runMain(['log', 'convert', '--to', '0', path, '-o', path]);
    expect(same.code).toBe(2);
  });
});
