/**
 * The viewer on a log of dsh's newer formats (issue 11 item 4): loaded as format 0 (the stream as
 * chunk events), and following it after the load reads nothing twice.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJsonlFile } from '../../src/session/index.js';
import { FileSource } from '../../src/viewer/source/file.js';
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
