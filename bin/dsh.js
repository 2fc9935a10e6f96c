#!/usr/bin/env node
// The CLI is the TypeScript build in dist/; this shim only finds it, so a checkout that was
// never built fails with what to do rather than a module-resolution stack trace.
//
// `npm run build` also links it into dist/bundle/ (scripts/bundle.mjs): a few files to load
// instead of ~300, which is most of a command's start-up. The bundle runs when it is at least as
// new as dist/cli/main.js; a dist/ rebuilt by `tsc` alone afterwards is newer and runs instead,
// so a stale bundle never hides a rebuild.
import { statSync } from 'node:fs';

const plain = new URL('../dist/cli/main.js', import.meta.url);
const bundle = new URL('../dist/bundle/main.js', import.meta.url);
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
const plainAt = mtime(plain);
const bundleAt = mtime(bundle);
if (plainAt === undefined && bundleAt === undefined) {
  process.stderr.write('dsh: the CLI is not built (dist/cli/main.js is missing): run npm run build\n');
  process.exit(1);
}
const entry = bundleAt !== undefined && (plainAt === undefined || bundleAt >= plainAt) ? bundle : plain;
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
