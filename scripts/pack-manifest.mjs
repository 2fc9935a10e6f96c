// The package.json that `npm pack` puts in the tarball carries no install-time scripts.
//
// In a checkout `prepare` builds dist/ on `npm ci`; in the tarball dist/ ships built, and a
// `prepare` (or any install script) there makes npm name dsh as a package with a script to run
// at install. npm has no per-tarball manifest, so `prepack` runs `strip` (after the build) and
// `postpack` runs `restore`: package.json is written back byte for byte from the copy `strip`
// kept. A pack that died between the two is repaired by the next `strip`, which restores first.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Scripts npm runs when the tarball is installed (as a dependency or with `npm i -g`). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, 'package.json.prepack');

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

function strip() {
  restore();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  for (const name of INSTALL_SCRIPTS) delete pkg.scripts?.[name];
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}

const mode = process.argv[2];
if (mode === 'strip') strip();
else if (mode === 'restore') restore();
else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
