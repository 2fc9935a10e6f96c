/**
 * Resume timing for big logs (not a test; no timing is asserted anywhere). It runs as plain
 * JavaScript built by `test/store/support/build.ts` (see docs/store.md, "Measuring resume").
 *
 * `gen <file> <turns>` writes a deterministic log (each turn: ~200 text deltas, a tool call with a
 * ~2 KB result, a second answer); `parse|codec|open <file>` loads it in a fresh process and
 * prints one JSON line: wall time and memory after the load.
 *
 *   parse  read the file, JSON.parse every line (the floor: no validation, no session)
 *   codec  loadJsonl(whole-file string), the session layer's reference loader
 *   open   SessionStore.open (streams the file)
 */
import { closeSync, openSync, readFileSync, writeSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Session, encodeEvents, encodeHeaderLine, loadJsonl } from '../../../src/session/index.js';
import { SessionStore } from '../../../src/store/store.js';
import { appendTurn, fixedClock, prng } from '../support/events.js';

const [mode, file, arg] = process.argv.slice(2) as [string, string, string?];

function mem(): { rssMB: number; heapMB: number } {
  global.gc?.();
  const m = process.memoryUsage();
  return { rssMB: Math.round(m.rss / 2 ** 20), heapMB: Math.round(m.heapUsed / 2 ** 20) };
}

async function main(): Promise<void> {
  if (mode === 'gen') {
    // <root>/--w--/big/session.jsonl, so `open` finds it.
    mkdirSync(dirname(file), { recursive: true });
    const fd = openSync(file, 'w');
    const turns = Number(arg);
    const rnd = prng(7);
    const s = Session.create({ id: 'big', header: { cwd: '/w' }, clock: fixedClock() });
    writeSync(fd, encodeHeaderLine(s.header));
    let written = 0;
    for (let t = 0; t < turns; t++) {
      appendTurn(s, { deltas: 200, resultBytes: 2048, rnd });
      const batch = [...s.since(written)];
      writeSync(fd, encodeEvents(batch));
      written = s.length;
    }
    closeSync(fd);
    console.log(JSON.stringify({ events: written }));
    return;
  }
  const t0 = performance.now();
  let events = 0;
  if (mode === 'parse') {
    const text = readFileSync(file, 'utf8');
    let pos = text.indexOf('\n') + 1;
    while (pos < text.length) {
      const nl = text.indexOf('\n', pos);
      JSON.parse(text.slice(pos, nl < 0 ? text.length : nl));
      events++;
      pos = nl < 0 ? text.length : nl + 1;
    }
  } else if (mode === 'codec') {
    const loaded = loadJsonl(readFileSync(file, 'utf8'));
    events = loaded.eventCount;
    const ms = performance.now() - t0;
    // Memory is measured while the session is still held.
    console.log(JSON.stringify({ mode, ms: Math.round(ms), lines: events, ...mem() }));
    void loaded.session.length;
    return;
  } else if (mode === 'open') {
    const root = join(dirname(file), '..', '..');
    const st = new SessionStore({ root });
    const s = await st.open('big');
    events = s.session.length;
    const ms = performance.now() - t0;
    console.log(JSON.stringify({ mode, ms: Math.round(ms), lines: events, ...mem() }));
    await s.close();
    return;
  }
  console.log(JSON.stringify({ mode, ms: Math.round(performance.now() - t0), lines: events, ...mem() }));
}

void main();
