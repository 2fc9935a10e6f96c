/**
 * `node:crypto`, loaded when first used. An `import` of it loads Node's whole crypto layer
 * (~30 internal modules, ~5 ms) at every start, and the light commands (`dsh --version`,
 * `dsh log check`, `dsh sessions` with nothing stored) hash nothing. The modules on those
 * commands' paths call this instead of importing it; test/cli/lazy-load.test.ts holds which
 * commands load it. `process.getBuiltinModule` returns Node's one copy (Node ≥ 20.16).
 */
export function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}
