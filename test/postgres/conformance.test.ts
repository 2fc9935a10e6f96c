/** The store conformance suite (test/store/conformance.ts) on the PostgreSQL store, one schema per test. */
import { PgStore } from '../../src/postgres/index.js';
import { storeConformance } from '../store/conformance.js';
import { describePg, freshSchema, pgUrl } from './support/pg.js';

describePg('PgStore', () => {
  storeConformance('PostgreSQL (PgStore)', {
    fresh: async () => {
      const schema = freshSchema();
      return (opts = {}) => new PgStore({ url: pgUrl!, schema, poolSize: 4, ...opts });
    },
  });
});
