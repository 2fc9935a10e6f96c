/**
 * PostgreSQL for tests: the server named by DSH_TEST_POSTGRES (`.ci/pg start` makes a throwaway
 * one on 127.0.0.1). Each test gets its own schema, dropped after the file, so files running in
 * parallel share the database without seeing each other.
 *
 * Without DSH_TEST_POSTGRES the suites skip with a message; with DSH_REQUIRE_POSTGRES=1 (CI sets
 * it) a missing server fails them instead, so CI cannot pass with the PostgreSQL tests skipped.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, it } from 'vitest';
import pg from 'pg';

export const pgUrl: string | undefined = process.env.DSH_TEST_POSTGRES || undefined;
const required = process.env.DSH_REQUIRE_POSTGRES === '1';

/** `describe` for suites that need PostgreSQL. */
export function describePg(name: string, fn: () => void): void {
  if (pgUrl) {
    describe(name, fn);
    return;
  }
  if (required) {
    describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(
          'DSH_REQUIRE_POSTGRES=1 but DSH_TEST_POSTGRES is not set: the PostgreSQL suites cannot be skipped here (run .ci/pg start)',
        );
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: set DSH_TEST_POSTGRES=postgres://… to run; eval "$(.ci/pg start)" starts a throwaway server)`, fn);
  if (!process.env.DSH_QUIET_SKIPS) console.warn(`[dsh tests] skipping "${name}": DSH_TEST_POSTGRES is not set`);
}

const schemas: string[] = [];

/** A fresh schema name (the store creates it on first use); dropped after this file. */
export function freshSchema(prefix = 't'): string {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  schemas.push(name);
  return name;
}

/** A plain client on the test database (for checks that go around the store). */
export async function sql(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  return c;
}

afterAll(async () => {
  if (!pgUrl || schemas.length === 0) return;
  const c = await sql();
  try {
    for (const s of schemas.splice(0)) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  } finally {
    await c.end();
  }
});
