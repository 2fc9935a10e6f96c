import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Examples import the package by name, as a user would.
    alias: { dsh: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // A developer's own Claude Code / Codex hooks must never run in the suite.
    setupFiles: ['test/support/hermetic-home.ts'],
    // The suite must stay under 10 minutes on 2 cores; crash and browser tests spawn processes.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
