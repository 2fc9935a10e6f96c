/**
 * The end-of-seed marker names what the seed was: a fork's parent events ("inherited"), or a
 * resumed session's own earlier run (nothing inherited).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, Session } from '../../src/session/index.js';
import { startViewer } from '../../src/viewer/index.js';
import { repoRoot } from '../support/shared.js';
import { json } from './support/http.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-seed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const parent = loadJsonl(readFileSync(join(repoRoot, 'examples', 'fix-typo.jsonl'), 'utf8'), { repair: false }).session;
const prefix = parent.events.filter((e) => e.type !== 'session/end-seed');

async function seedItem(file: string): Promise<Record<string, unknown>> {
  const viewer = await startViewer({ source: file });
  try {
    const page = await json<{ items: Record<string, unknown>[] }>(viewer.url, 'items', { from: 0, limit: 1000 });
    const item = page.items.find((i) => i.kind === 'seed-end');
    expect(item).toBeDefined();
    return item!;
  } finally {
    await viewer.close();
  }
}

describe('the seed marker', () => {
  it('of a fork names the parent it inherited from', async () => {
    const child = Session.create({ id: 'child-1', seed: prefix, header: { parentSession: parent.id, seedLength: prefix.length } });
    const file = join(dir, 'fork.jsonl');
    writeFileSync(file, encodeJsonl(child.header, child.events));
    expect(await seedItem(file)).toMatchObject({
      kind: 'seed-end',
      seq: prefix.length,
      inherited: prefix.length,
      from: 'fork',
      parent: parent.id,
    });
  });

  it('of a resumed session (no parent) is not called inherited', async () => {
    const resumed = Session.create({ id: parent.id, seed: prefix, header: parent.header });
    const file = join(dir, 'resumed.jsonl');
    writeFileSync(file, encodeJsonl(resumed.header, resumed.events));
    const item = await seedItem(file);
    expect(item).toMatchObject({ kind: 'seed-end', seq: prefix.length, from: 'resume' });
    expect(item).not.toHaveProperty('parent');
  });
});
