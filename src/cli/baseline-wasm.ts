/**
 * Node's `fetch` (which the provider SDKs use) parses HTTP with llhttp, compiled to WebAssembly.
 * With V8's default tiering, the parser's hot functions are recompiled by the optimising compiler
 * while the first answer is parsed: ~150 ms of wall time (~140 ms of CPU) between the answer
 * reaching `dsh run` and `dsh run` reading it (bench/README.md, session 15). Code compiled by V8's
 * baseline compiler (Liftoff) parses a model's stream many times faster than a model writes it,
 * so the tier-up budget is set out of reach.
 *
 * V8 keys the code cache Node compiles its own modules from by V8's flags: every built-in loaded
 * after a flag changes is compiled from source. So the ones a request needs are loaded first:
 * fetch's implementation (`new Headers()` loads it, and it starts compiling the parser; the
 * budget set just after still applies to it, as the figures show) and TLS.
 *
 * The flags are the process's: the CLI sets this, as the owner of its process, for the commands
 * that talk to a model, as they start. The library leaves V8's flags to its host. dsh compiles no
 * other WebAssembly.
 */

/** The commands that reach a model's API (main.ts names the command by its first word). */
export const MODEL_COMMANDS: ReadonlySet<string> = new Set(['run', 'chat', 'acp', 'sdk', 'worker']);

/** Keep WebAssembly compiled by V8's baseline compiler in this process, from now on. */
export function preferBaselineWasm(): void {
  new Headers();
  process.getBuiltinModule('node:https');
  process.getBuiltinModule('node:v8').setFlagsFromString('--wasm-tiering-budget=2000000000');
}
