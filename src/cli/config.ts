/**
 * `dsh config`: where configuration comes from and what it resolves to. Keys are never printed:
 * literal secrets are masked, and for the selected provider only whether a key was found is shown.
 */
import { configLocations, loadConfig, llmSection, redactConfig, type LoadedConfig } from '../config/index.js';
import { chooseModel, modelSource } from '../llm/select.js';
import { LlmError } from '../model/failure.js';
import type { Io } from './output.js';
import { EXIT_OK } from './errors.js';

export interface ConfigShowOptions {
  json?: boolean;
  config?: string;
  model?: string;
  cwd?: string;
}

interface ModelReport {
  ref?: string;
  from?: string;
  provider?: { name: string; kind: string; baseUrl: string; key: 'set' | 'not needed' };
  error?: string;
}

function modelReport(loaded: LoadedConfig, env: NodeJS.ProcessEnv, explicit?: string): ModelReport {
  const llm = llmSection(loaded.config);
  const source = modelSource({ spec: explicit, env, config: llm });
  const from = source === 'argument' ? '--model' : source;
  try {
    // The choice the agent commands would make; reported without making its adapter.
    const choice = chooseModel({ spec: explicit, env, config: llm });
    const out: ModelReport = { ref: `${choice.config.provider}:${choice.config.model}`, from };
    try {
      const p = choice.route()!;
      out.provider = { name: p.name, kind: p.kind, baseUrl: p.baseUrl, key: p.apiKey !== undefined ? 'set' : 'not needed' };
    } catch (e) {
      out.error = e instanceof Error ? e.message : String(e);
    }
    return out;
  } catch (e) {
    if (e instanceof LlmError) return { from, error: e.message };
    throw e;
  }
}

export async function runConfigShow(opts: ConfigShowOptions, io: Io): Promise<number> {
  const cwd = opts.cwd ?? process.cwd();
  const loaded = await loadConfig({ cwd, env: io.env, ...(opts.config !== undefined ? { file: opts.config } : {}) });
  const model = modelReport(loaded, io.env, opts.model);
  const locations = configLocations(cwd, io.env);
  if (opts.json) {
    io.out.line(
      JSON.stringify(
        { locations, sources: loaded.sources, warnings: loaded.warnings, model, config: redactConfig(loaded.config) },
        null,
        2,
      ),
    );
    return EXIT_OK;
  }
  io.out.line(`user config:    ${locations.user}${loaded.sources.some((s) => s.file === locations.user) ? '' : ' (absent)'}`);
  io.out.line(`project config: ${locations.project}${loaded.sources.some((s) => s.file === locations.project) ? '' : ' (absent)'}`);
  for (const w of loaded.warnings) io.err.line(`${io.err.style('yellow', 'warning')}: ${w.file}: ${w.path}: ${w.message}`);
  if (model.ref) io.out.line(`model:          ${model.ref} (from ${model.from})`);
  if (model.provider)
    io.out.line(
      `provider:       ${model.provider.name} (${model.provider.kind}) at ${model.provider.baseUrl}; API key ${model.provider.key}`,
    );
  if (model.error) io.out.line(`model problem:  ${model.error}`);
  io.out.line('effective config (secrets masked):');
  io.out.line(JSON.stringify(redactConfig(loaded.config), null, 2));
  return EXIT_OK;
}
