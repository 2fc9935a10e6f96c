/**
 * The viewer on a log of dsh's newer formats (issue 11 item 4): loaded as format 0 (the stream as
 * chunk events), and following it after the load reads nothing twice.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadJsonlFile } from '../../src/session/index.js';
import { FileSource } from '../../src/viewer/source/file.js';
import { nextLogs } from '../support/next-logs.js';
import { describeShared, sharedDir } from '../support/shared.js';

describeShared('viewer on a format 4 log', () => {
  it('opens it as the loaders read it, and a poll adds nothing', () => {
    const path = join(sharedDir, 'fixtures', 'dsh-next', 'snapshots__session__portal-cli__session.v4.jsonl');
    const loaded = loadJsonlFile(path, { repair: false, placeholders: 'warn' });
    const src = FileSource.open(path, { pollMs: 60_000 });
    try {
      expect(src.length()).toBe(loaded.eventCount);
      expect(src.at(src.length() - 1)).toEqual(loaded.session.at(loaded.eventCount - 1));
      expect(loaded.session.events.some((e) => e.type === 'assistant/chunk')).toBe(true);
      src.poll();
      expect(src.length()).toBe(loaded.eventCount);
      expect(src.follow()).toEqual({ state: 'following' });
    } finally {
      src.close();
    }
  });
});

/**
 * Following a growing newer-format log (issue 11, session 3): the rows a dsh writer appends are
 * converted as the load converts them (streams to chunk events, seqs renumbered, placeholders
 * told apart), so after each poll the viewer holds what loading the file at that point holds.
 * Every real V2–V4 log is cut after a third and after two thirds of its rows; the rest is
 * appended in pieces, one of them ending mid-line.
 */
describeShared('viewer following a growing format 2–4 log', () => {
  const logs = nextLogs((f) => /\.v[234]\.jsonl$/.test(f) || f.includes('room-deliberation'));
  const tmp = mkdtempSync(join(tmpdir(), 'dsh-viewer-next-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const files = [...logs.keys()];

  it.each(files)('%s: appended rows show up as the loader reads them', (f) => {
    const text = readFileSync(logs.get(f)!, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    const rows = lines.length - 1;
    // A fork's load needs its inherited cut: cut after the session/end-seed.
    const seedAt = lines.findIndex((l) => l.includes('"session/end-seed"') && l.includes('"inherited":true'));
    const whole = loadJsonlFile(logs.get(f)!, { repair: false, placeholders: 'warn', clock: () => 0 });
    for (const k of [Math.floor(rows / 3), Math.floor((2 * rows) / 3)]) {
      const cut = Math.max(k, seedAt) + 1; // lines kept: the header and `cut - 1` rows
      const path = join(tmp, `${f}-${k}.jsonl`);
      writeFileSync(path, `${lines.slice(0, cut).join('\n')}\n`);
      const src = FileSource.open(path, { pollMs: 60_000 });
      const seen: number[] = [];
      src.subscribe((b) => seen.push(...b.map((e) => e.seq)));
      try {
        const before = src.length();
        const rest = `${lines.slice(cut).join('\n')}\n`;
        // Three pieces, the middle one cut inside a line (held back until its newline comes).
        const a = Math.floor(rest.length / 3);
        const b = Math.floor((2 * rest.length) / 3);
        for (const piece of [rest.slice(0, a), rest.slice(a, b), rest.slice(b)]) {
          appendFileSync(path, piece);
          src.poll();
          expect(src.follow().state, JSON.stringify(src.follow())).toBe('following');
        }
        expect(src.length()).toBe(whole.eventCount);
        for (let s = 0; s < whole.eventCount; s++) expect(src.at(s), `seq ${s}`).toEqual(whole.session.at(s));
        // Published once each, in order, right after what was loaded.
        expect(seen).toEqual(Array.from({ length: whole.eventCount - before }, (_, i) => before + i));
      } finally {
        src.close();
      }
    }
  });

  it('an appended row the loader would refuse stops following at its source line', () => {
    const f = 'snapshots__session__portal-cli__session.v4.jsonl';
    const lines = readFileSync(logs.get(f)!, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const path = join(tmp, 'refused.jsonl');
    writeFileSync(path, `${lines.slice(0, 5).join('\n')}\n`);
    const src = FileSource.open(path, { pollMs: 60_000 });
    try {
      const n = src.length();
      // Line 6 is a good row; line 7 a tool/call whose turn is not a number.
      appendFileSync(path, `${lines[5]}\n{"type":"tool/call","data":{"turn":"one","step":1,"callId":"c","name":"x","arguments":"{}"}}\n`);
      src.poll();
      expect(src.length()).toBeGreaterThan(n);
      const state = src.follow();
      expect(state.state).toBe('stopped');
      expect(JSON.stringify(state)).toMatch(/refused\.jsonl:7\b|line 7\b/);
    } finally {
      src.close();
    }
  });
});
