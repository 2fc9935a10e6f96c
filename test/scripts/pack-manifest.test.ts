/**
 * `npm pack` writes a package.json without install-time scripts (`prepare` builds dist/ in a
 * checkout; the tarball ships dist/ built), and leaves the checkout's package.json as it was.
 * Real npm packs a copy of the package (package.json, the strip/restore script, a stand-in
 * dist/): packing the checkout itself would rebuild dist/ and rewrite package.json under the
 * other tests that read them. Only the build script of the copy is a no-op.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { tempDir } from '../cli/support/agent.js';

/** Scripts npm runs when a package is installed from a tarball or as a dependency. */
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'prepare'];

interface Manifest {
  scripts: Record<string, string>;
  [k: string]: unknown;
}

function packageCopy(): { dir: string; text: string } {
  const dir = tempDir('dsh-pack-');
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Manifest;
  pkg.scripts.build = 'node -e ""';
  const text = `${JSON.stringify(pkg, null, 2)}\n`;
  writeFileSync(join(dir, 'package.json'), text);
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(repoRoot, 'scripts', 'pack-manifest.mjs'), join(dir, 'scripts', 'pack-manifest.mjs'));
  cpSync(join(repoRoot, 'bin'), join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'cli', 'main.js'), 'export async function main() { return 0; }\n');
  return { dir, text };
}

function pack(dir: string): Manifest {
  const out = tempDir('dsh-pack-out-');
  const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  execFileSync('npm', ['pack', '--pack-destination', out, '--loglevel=error'], { cwd: dir, env, stdio: 'pipe' });
  const tgz = readdirSync(out).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack wrote no tarball in ${out}`);
  const json = execFileSync('tar', ['xzf', join(out, tgz), '-O', 'package/package.json'], { encoding: 'utf8' });
  return JSON.parse(json) as Manifest;
}

describe('npm pack', () => {
  it('the packed package.json has no install-time scripts and the rest of the checkout manifest', () => {
    const { dir, text } = packageCopy();
    const source = JSON.parse(text) as Manifest;
    // The checkout builds on `npm ci`: the test is meaningful only while it has such a script.
    expect(Object.keys(source.scripts).filter((s) => INSTALL_TIME.includes(s))).not.toEqual([]);
    const packed = pack(dir);
    expect(Object.keys(packed.scripts).filter((s) => INSTALL_TIME.includes(s))).toEqual([]);
    const want = structuredClone(source);
    for (const s of INSTALL_TIME) delete want.scripts[s];
    expect(packed).toEqual(want);
    // The checkout's package.json is back byte for byte, and no copy is left beside it.
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'package.json.prepack'))).toBe(false);
  }, 60_000);

  it('a pack that died between strip and restore is repaired by the next pack', () => {
    const { dir, text } = packageCopy();
    // What a pack killed after `prepack` leaves: the stripped manifest and the kept original.
    writeFileSync(join(dir, 'package.json.prepack'), text);
    const stripped = JSON.parse(text) as Manifest;
    delete stripped.scripts.prepare;
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(stripped, null, 2)}\n`);
    const packed = pack(dir);
    expect(packed.scripts.prepare).toBeUndefined();
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'package.json.prepack'))).toBe(false);
  }, 60_000);
});
