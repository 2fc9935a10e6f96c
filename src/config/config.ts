/**
 * The config file: one JSON document composed of the sections each layer owns (`model` and
 * `providers` from src/llm, `mcpServers` / `permissions` / `sandbox` from src/tools,
 * `compaction` from src/compaction), read from
 *
 *   user:     $DSH_HOME/config.json   (DSH_HOME defaults to ~/.dsh)
 *   project:  <workspace>/.dsh/config.json
 *
 * and merged, project over user. A bad file is refused with its path, line and the JSON path of
 * the offending value; nothing is guessed.
 *
 * A project config comes with the repository you are working in, so it is untrusted: it may not
 * loosen what the agent may do (sandbox mode, approval policy, allow rules, MCP servers that run
 * commands, provider endpoints and keys) unless the user config lists the workspace in
 * `trustedProjects`. Such keys are dropped with a warning, never applied silently.
 */
import { CodedError } from '../model/coded-error.js';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { LlmConfig } from '../llm/config.js';
import type { ToolsConfig } from '../tools/config.js';
import { isHttpServer } from '../tools/config-options.js';
import { mergeCompactionConfig } from '../compaction/policy.js';
import type { DshConfig } from './schema.js';

export type { DshConfig };

export class ConfigError extends CodedError<'CONFIG_UNREADABLE' | 'CONFIG_NOT_JSON' | 'CONFIG_INVALID'> {
  constructor(
    code: 'CONFIG_UNREADABLE' | 'CONFIG_NOT_JSON' | 'CONFIG_INVALID',
    message: string,
    readonly file: string,
    readonly path?: string,
  ) {
    super(code, message);
    this.name = 'ConfigError';
  }
}

export interface ConfigWarning {
  file: string;
  path: string;
  message: string;
}

export interface LoadedConfig {
  config: DshConfig;
  /** Files read, in merge order. */
  sources: { scope: 'user' | 'project'; file: string }[];
  warnings: ConfigWarning[];
}

export interface ConfigLocations {
  user: string;
  project: string;
}

export function dshHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const h = env.DSH_HOME?.trim();
  return h ? resolve(h) : join(homedir(), '.dsh');
}

/** The user config: under the dsh home, whatever the current directory (which may have been removed). */
export function userConfigFile(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return join(dshHome(env), 'config.json');
}

export function configLocations(cwd: string, env: Readonly<Record<string, string | undefined>> = process.env): ConfigLocations {
  return { user: userConfigFile(env), project: join(resolve(cwd), '.dsh', 'config.json') };
}

/** Line and column of a character offset, for JSON syntax errors. */
function lineCol(text: string, offset: number): string {
  let line = 1;
  let col = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return `line ${line}, column ${col}`;
}

function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (p, k) =>
      typeof k === 'number'
        ? `${p}[${k}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(k))
          ? `${p}.${String(k)}`
          : `${p}[${JSON.stringify(String(k))}]`,
    '$',
  );
}

/**
 * Parse and validate one config document. Asynchronous because the schema (and zod with it) is
 * imported by the first file read, not at start-up: a run with no config file never loads it.
 */
export async function parseConfig(text: string, file: string): Promise<DshConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec((e as Error).message);
    const where = m ? ` at ${lineCol(text, Number(m[1]))}` : '';
    throw new ConfigError('CONFIG_NOT_JSON', `${file}: not valid JSON${where}: ${(e as Error).message}`, file);
  }
  const { ConfigSchema } = await import('./schema.js');
  const r = ConfigSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = jsonPath(issue.path);
    const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more problem${r.error.issues.length > 2 ? 's' : ''})` : '';
    throw new ConfigError('CONFIG_INVALID', `${file}: ${path}: ${issue.message}${more}`, file, path);
  }
  return r.data;
}

export async function readConfigFile(file: string): Promise<DshConfig | undefined> {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EISDIR'
        ? 'it is a directory, not a JSON file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : (e as Error).message;
    throw new ConfigError('CONFIG_UNREADABLE', `${file}: cannot read: ${why}`, file);
  }
  return parseConfig(text, file);
}

/** Keys a project may not set unless trusted, because they widen what the agent can do or where data goes. */
function untrustedProjectKeys(c: DshConfig): string[] {
  const out: string[] = [];
  if (c.sandbox !== undefined) out.push('sandbox');
  if (c.permissions?.approval !== undefined) out.push('permissions.approval');
  if (c.permissions?.allow !== undefined) out.push('permissions.allow');
  for (const [name, s] of Object.entries(c.mcpServers ?? {})) if (!isHttpServer(s)) out.push(`mcpServers.${name}`);
  for (const [name, p] of Object.entries(c.providers ?? {}))
    if (p.baseUrl !== undefined || p.apiKey !== undefined || p.headers !== undefined) out.push(`providers.${name}`);
  if (c.trustedProjects !== undefined) out.push('trustedProjects');
  // A repository must not send the sessions (prompts, tool output) to a database of its choosing.
  if (c.store !== undefined) out.push('store');
  return out;
}

function dropKey(c: DshConfig, key: string): void {
  const [head, sub] = key.split(/\.(.*)/s) as [string, string | undefined];
  const obj = c as Record<string, unknown>;
  if (sub === undefined) {
    delete obj[head];
    return;
  }
  const section = obj[head] as Record<string, unknown> | undefined;
  if (section) delete section[sub];
}

/** Merge project over user: records merge by key, rule lists accumulate, scalars override. */
export function mergeConfig(base: DshConfig, over: DshConfig): DshConfig {
  const out: DshConfig = { ...base, ...over };
  if (base.providers || over.providers) out.providers = { ...base.providers, ...over.providers };
  if (base.mcpServers || over.mcpServers) out.mcpServers = { ...base.mcpServers, ...over.mcpServers };
  if (base.prices || over.prices) out.prices = { ...base.prices, ...over.prices };
  if (base.permissions || over.permissions) {
    const p = { ...base.permissions, ...over.permissions };
    for (const k of ['allow', 'ask', 'deny'] as const) {
      const list = [...(base.permissions?.[k] ?? []), ...(over.permissions?.[k] ?? [])];
      if (list.length > 0) p[k] = list;
    }
    out.permissions = p;
  }
  if (base.sandbox || over.sandbox) out.sandbox = { ...base.sandbox, ...over.sandbox };
  const compaction = mergeCompactionConfig(base.compaction, over.compaction);
  if (compaction !== undefined) out.compaction = compaction;
  return out;
}

export interface LoadConfigOptions {
  /** The workspace (project config lives in `<cwd>/.dsh/config.json`). */
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** An explicit file (e.g. `--config`), read after the user and project files. Trusted. */
  file?: string;
}

export async function loadConfig(opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const loc = configLocations(cwd, opts.env);
  const warnings: ConfigWarning[] = [];
  const sources: LoadedConfig['sources'] = [];
  let config: DshConfig = {};
  const user = await readConfigFile(loc.user);
  if (user) {
    config = user;
    sources.push({ scope: 'user', file: loc.user });
  }
  const project = loc.project === loc.user ? undefined : await readConfigFile(loc.project);
  if (project) {
    const trusted = projectTrusted(user ?? {}, cwd, opts.env);
    if (!trusted) {
      for (const key of untrustedProjectKeys(project)) {
        dropKey(project, key);
        warnings.push({
          file: loc.project,
          path: `$.${key}`,
          message: `ignored: a project config may not set ${key} unless ${loc.user} lists this workspace in trustedProjects`,
        });
      }
    }
    config = mergeConfig(config, project);
    sources.push({ scope: 'project', file: loc.project });
  }
  if (opts.file) {
    const explicit = await readConfigFile(resolve(opts.file));
    if (!explicit) throw new ConfigError('CONFIG_UNREADABLE', `${opts.file}: no such file`, opts.file);
    config = mergeConfig(config, explicit);
    sources.push({ scope: 'user', file: resolve(opts.file) });
  }
  return { config, sources, warnings };
}

/**
 * Whether `config` (the user's: a project cannot set `trustedProjects` unless already trusted)
 * lists the workspace `cwd` in `trustedProjects`. What a project brings that can run commands
 * (its config's loosening keys, its Claude Code / Codex hooks) runs only then.
 */
export function projectTrusted(config: DshConfig, cwd: string, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const dir = resolve(cwd);
  return (config.trustedProjects ?? []).some((p) => resolve(isAbsolute(p) ? p : join(dshHome(env), p)) === dir);
}

/** The LLM section, as model selection takes it. */
export function llmSection(c: DshConfig): LlmConfig {
  const out: LlmConfig = {};
  if (c.model !== undefined) out.model = c.model;
  if (c.reasoningEffort !== undefined) out.reasoningEffort = c.reasoningEffort;
  if (c.providers !== undefined) out.providers = c.providers;
  return out;
}

/** The tools sections, as the tool plugins take them. */
export function toolsSection(c: DshConfig): ToolsConfig {
  const out: ToolsConfig = {};
  if (c.mcpServers !== undefined) out.mcpServers = c.mcpServers;
  if (c.permissions !== undefined) out.permissions = c.permissions;
  if (c.sandbox !== undefined) out.sandbox = c.sandbox;
  return out;
}

/** A copy safe to print: literal keys and header values are masked. */
export function redactConfig(c: DshConfig): DshConfig {
  const out = structuredClone(c);
  if (out.store !== undefined) out.store = maskUrlPassword(out.store);
  for (const p of Object.values(out.providers ?? {})) {
    if (p.apiKey !== undefined) p.apiKey = '***';
    if (p.headers) for (const k of Object.keys(p.headers)) p.headers[k] = '***';
  }
  for (const s of Object.values(out.mcpServers ?? {})) {
    if (isHttpServer(s) && s.headers) for (const k of Object.keys(s.headers)) s.headers[k] = '***';
    if (!isHttpServer(s) && s.env) for (const k of Object.keys(s.env)) s.env[k] = '***';
  }
  return out;
}

/** A URL with its password (in the authority or a `password` parameter) shown as ***. */
export function maskUrlPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
