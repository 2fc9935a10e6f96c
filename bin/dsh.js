#!/usr/bin/env node
// The CLI is the TypeScript build in dist/; this shim only finds it, so a checkout that was
// never built fails with what to do rather than a module-resolution stack trace.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('dsh: the CLI is not built (dist/cli/main.js is missing): run npm run build\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
