#!/usr/bin/env bash
# Installs dsh as users install a CLI and checks the installed command works: npm pack, then
# `npm install -g` of the tarball into a throwaway prefix, then the installed `dsh` run from
# another directory. dist/ ships built in the tarball, so no TypeScript build runs at install.
# better-sqlite3 (native, used only by `dsh sessions search`) is an optional dependency: npm
# downloads its prebuilt binary, or compiles it where none is reachable (minutes), and if that
# fails the install still succeeds and search alone says it needs it. Needs the npm registry.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

cd "$root"
# npm pack runs prepack (the build, then the manifest without install scripts) and postpack.
tgz=$(npm pack --silent --pack-destination "$tmp" | tail -n 1)
# (The listing is read whole first: grep -q stopping early would fail the pipe under pipefail.)
listing=$(tar tzf "$tmp/$tgz")
grep -qx 'package/dist/cli/main.js' <<<"$listing" || fail "the tarball has no dist/cli/main.js"
grep -qx 'package/dist/bundle/main.js' <<<"$listing" || fail "the tarball has no dist/bundle/main.js (scripts/bundle.mjs)"
if grep -q '^package/\(test\|bench\|scripts\)/' <<<"$listing"; then fail "the tarball ships tests or benches"; fi
scripts=$(tar xzf "$tmp/$tgz" -O package/package.json | node -e "
const p = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(['preinstall', 'install', 'postinstall', 'prepare'].filter((s) => p.scripts?.[s]).join(' '));
")
[[ -z $scripts ]] || fail "the tarball's package.json has install-time scripts: $scripts"

prefix="$tmp/prefix"
npm install -g --prefix "$prefix" "$tmp/$tgz" --no-audit --no-fund --prefer-offline --loglevel=error
dsh="$prefix/bin/dsh"
pkg="$prefix/lib/node_modules/dsh"
[[ -x $dsh ]] || fail "no dsh on the prefix's bin"
[[ ! -e $pkg/node_modules/typescript ]] || fail "typescript (a dev dependency) was installed"

cd "$tmp"
export DSH_HOME="$tmp/home"
want=$(node -p "require('$root/package.json').version")
[[ $("$dsh" --version) == "$want" ]] || fail "dsh --version is not $want"
shown=$("$dsh" log show "$pkg/examples/fix-typo.jsonl")
grep -q '^session 5f0c1e2a' <<<"$shown" || fail "dsh log show of the shipped example"
"$dsh" log check -q "$pkg/examples/fix-typo.jsonl" || fail "dsh log check of the shipped example"
"$dsh" completion bash | bash -n || fail "the bash completion script does not parse"
# The viewer serves its page assets from the installed package.
"$dsh" view "$pkg/examples/fix-typo.jsonl" >"$tmp/view.out" 2>&1 &
view_pid=$!
for _ in $(seq 100); do grep -q '^http://127.0.0.1' "$tmp/view.out" && break; sleep 0.1; done
url=$(head -n 1 "$tmp/view.out")
page=$(curl -fsS "$url") && js=$(curl -fsS "${url}app.js") ||
  { kill "$view_pid"; fail "dsh view did not serve its page: $(cat "$tmp/view.out")"; }
kill "$view_pid"
grep -qi '<!doctype html' <<<"$page" && [[ -n $js ]] || fail "dsh view served no page"

# The library, imported by name from a project that depends on the tarball.
mkdir "$tmp/app" && cd "$tmp/app"
echo '{"name":"app","version":"1.0.0","type":"module","private":true}' >package.json
npm install "$tmp/$tgz" --no-audit --no-fund --prefer-offline --loglevel=error
node -e "
const { loadJsonlFile } = await import('dsh');
const l = loadJsonlFile('$pkg/examples/fix-typo.jsonl');
if (l.session.deriveMessages().length !== 13) { console.error('unexpected history length'); process.exit(1); }
" --input-type=module || fail "import('dsh') from an app"

search_out=$("$dsh" sessions search --in "$pkg/examples" typo 2>&1) && search_rc=0 || search_rc=$?
if [[ -e $pkg/node_modules/better-sqlite3/build/Release/better_sqlite3.node ]]; then
  ((search_rc == 0)) || fail "dsh sessions search (better-sqlite3 installed): $search_out"
  search=search
else
  ((search_rc == 1)) && grep -q 'better-sqlite3' <<<"$search_out" ||
    fail "without better-sqlite3, dsh sessions search should fail naming it (rc $search_rc): $search_out"
  search="search unavailable: the optional better-sqlite3 did not install"
fi
echo "check-install: ok ($tgz; $search)"
