// Preloaded into a dsh child process with `--import` (through NODE_OPTIONS): records every module
// the process loads into the file named by DSH_TRACE_MODULES, one URL a line. ES modules are
// seen by a loader hook as they load; CommonJS modules (required directly, or imported) are read
// from the require cache when the process exits, and so are Node's own modules, however loaded
// (`process.moduleLoadList`), as `node:` URLs.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const out = process.env.DSH_TRACE_MODULES;
if (out) {
  register(new URL('./trace-modules-hooks.mjs', import.meta.url), { data: { out } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => `node:${m.slice(13)}`);
    const files = [...Object.keys(cache).map((f) => pathToFileURL(f).href), ...builtins];
    if (files.length > 0) appendFileSync(out, `${files.join('\n')}\n`);
  });
}
