/**
 * A turn the log leaves open is live while a live process holds the session's lock, and dangling
 * once that process is gone: a real writer process, really killed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJsonlFile } from '../../src/session/index.js';
import { alertsOf, stats, writerOf } from '../../src/query/index.js';
import { buildChild } from '../store/support/build.js';
import { tempDir } from '../store/support/tmp.js';
import { repoRoot } from '../support/shared.js';
import { dshIn } from '../cli/support/inproc.js';

function startWriter(root: string, id: string, cwd: string): Promise<{ path: string; kill: () => Promise<void> }> {
  const script = buildChild(join(repoRoot, 'test', 'query', 'fixtures', 'writer-child.ts'));
  const proc = spawn(process.execPath, [script, root, id, cwd], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  let err = '';
  proc.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`writer not ready: ${err}`)), 15_000);
    proc.stdout.on('data', (d) => {
      buf += String(d);
      const m = /ready (.*)\n/.exec(buf);
      if (m) {
        clearTimeout(t);
        resolve({ path: m[1]!, kill: async () => (proc.kill('SIGKILL'), await exited) });
      }
    });
    void exited.then(() => reject(new Error(`writer exited: ${err}`)));
  });
}

describe('live and dangling turns', () => {
  it('tells a turn a live writer holds from one whose writer was killed', async () => {
    const root = tempDir('dsh-query-');
    const w = await startWriter(root, 'live-1', '/tmp/ws');
    try {
      const live = writerOf(w.path);
      expect(live.state).toBe('live');
      expect(live.holder?.pid).toBeGreaterThan(0);
      const st = stats(loadJsonlFile(w.path), { writer: live });
      expect(st.reasons).toEqual({ live: 1 });
      expect(st.live).toEqual([1]);
      expect(st.dangling).toEqual([]);
      // The call is in flight, not unanswered; no alert fires.
      expect(st.unanswered).toEqual([]);
      expect(alertsOf(st)).toEqual([]);
    } finally {
      await w.kill();
    }
    // The lock file is still there, but its holder is dead.
    expect(existsSync(join(dirname(w.path), 'session.lock'))).toBe(true);
    const dead = writerOf(w.path);
    expect(dead).toEqual({ state: 'none' });
    const st = stats(loadJsonlFile(w.path), { writer: dead });
    expect(st.reasons).toEqual({ dangling: 1 });
    expect(st.dangling).toEqual([1]);
    expect(st.unanswered.map((u) => u.callId)).toEqual(['call_live']);
    expect(alertsOf(st).map((a) => a.kind)).toEqual(['dangling', 'unanswered']);
  });

  it('dsh log check --alerts passes on a log its live writer holds, and fails once the writer is killed', async () => {
    const root = tempDir('dsh-query-');
    const w = await startWriter(root, 'live-2', '/tmp/ws');
    try {
      const live = await dshIn(['log', 'check', '--alerts', w.path]);
      expect(live.code).toBe(0);
      const stats = JSON.parse((await dshIn(['log', 'stats', '--json', w.path])).stdout);
      expect(stats.reasons).toEqual({ live: 1 });
      expect(stats.writer.state).toBe('live');
    } finally {
      await w.kill();
    }
    const dead = await dshIn(['log', 'check', '--alerts', w.path]);
    expect(dead.code).toBe(1);
    expect(dead.stdout).toMatch(/alert dangling \(turn 1, seq 0\)/);
    expect(dead.stdout).toMatch(/alert unanswered \(turn 1, seq 4\): tool call bash \[call_live\]/);
  });

  it('reads no lock as no writer', () => {
    const dir = tempDir('dsh-query-');
    expect(writerOf(join(dir, 'session.jsonl'))).toEqual({ state: 'none' });
  });
});
