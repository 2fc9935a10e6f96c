/**
 * Node's `fetch` (which the provider SDKs use) parses HTTP with llhttp compiled to WebAssembly,
 * compiled when the first request is made, by V8's optimising WebAssembly compiler: ~150 ms of
 * wall time (~130 ms of CPU) between `dsh run` starting and the first answer reaching it
 * (bench/README.md, session 15). V8's baseline compiler (Liftoff) compiles it in a few
 * milliseconds, and it parses a model's stream many times faster than a model writes it.
 *
 * The flag is the process's: the CLI sets it, as the owner of its process, for the commands that
 * talk to a model, before they make a request. The library leaves V8's flags to its host. dsh
 * compiles no other WebAssembly.
 */

/** The commands that reach a model's API (main.ts names the command by its first word). */
export const MODEL_COMMANDS: ReadonlySet<string> = new Set(['run', 'chat', 'acp', 'sdk', 'worker']);

/** Have V8 compile WebAssembly with its baseline compiler only, from now on in this process. */
export function preferBaselineWasm(): void {
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
}
