/** The store conformance suite (conformance.ts) on the JSONL store, one temp root per test. */
import { SessionStore } from '../../src/store/index.js';
import { storeConformance } from './conformance.js';
import { tempDir } from './support/tmp.js';

storeConformance('JSONL (SessionStore)', {
  fresh: async () => {
    const root = tempDir();
    return (opts = {}) => new SessionStore({ root, ...opts });
  },
});
