/**
 * Which hook configurations run: files the caller names (trusted: the caller chose them), the
 * user's own (`~/.claude/settings.json`, `~/.codex/hooks.json`: trusted, as the user wrote them
 * for every project, the way Claude Code and Codex read them), and the workspace's own
 * (`.claude/settings.json`, `.claude/settings.local.json`, `.codex/hooks.json`),
 * which come with the repository and so run only in a trusted project, as a project's config
 * may loosen nothing until then. The user's files are where those agents keep them: under
 * `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` when set (the variables Claude Code and Codex read),
 * else `~/.claude` and `~/.codex`; the test suite points both variables at an empty place, so a
 * developer's own hooks never run in it. Never throws: a file that cannot be used, and project hooks left
 * out because the project is not trusted, are warnings the CLI prints before the work starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { HookConfigError, readHookConfig, type HookConfig, type HookDialect } from './config.js';

export interface HookFile {
  dialect: HookDialect;
  path: string;
}

export const PROJECT_HOOK_FILES: readonly HookFile[] = [
  { dialect: 'claude-code', path: join('.claude', 'settings.json') },
  { dialect: 'claude-code', path: join('.claude', 'settings.local.json') },
  { dialect: 'codex', path: join('.codex', 'hooks.json') },
];

/**
 * The user's own hook files (trusted like the user config). `home`: the caller's choice, which
 * wins (`<home>/.claude/settings.json`, `<home>/.codex/hooks.json`); otherwise each agent's own
 * variable, then the home directory.
 */
export function userHookFiles(opts: { home?: string; env?: NodeJS.ProcessEnv } = {}): HookFile[] {
  const env = opts.env ?? process.env;
  const home = opts.home ?? (env.HOME || homedir());
  const dir = (variable: string | undefined, fallback: string): string =>
    opts.home === undefined && variable ? resolve(variable) : resolve(home, fallback);
  return [
    { dialect: 'claude-code', path: join(dir(env.CLAUDE_CONFIG_DIR, '.claude'), 'settings.json') },
    { dialect: 'codex', path: join(dir(env.CODEX_HOME, '.codex'), 'hooks.json') },
  ];
}

export interface LoadedHooks {
  configs: HookConfig[];
  warnings: string[];
}

export function loadHookConfigs(opts: {
  cwd: string;
  trusted: boolean;
  files?: readonly HookFile[];
  home?: string;
  env?: NodeJS.ProcessEnv;
}): LoadedHooks {
  const out: LoadedHooks = { configs: [], warnings: [] };
  const read = (f: HookFile, path: string): void => {
    try {
      const c = readHookConfig(path, f.dialect);
      out.configs.push(c);
      out.warnings.push(...c.warnings);
    } catch (e) {
      if (!(e instanceof HookConfigError)) throw e;
      out.warnings.push(`${e.message} [${e.code}]; none of its hooks run`);
    }
  };
  const seen = new Set<string>();
  for (const f of opts.files ?? []) {
    seen.add(resolve(f.path));
    read(f, f.path);
  }
  for (const f of userHookFiles(opts)) {
    if (seen.has(f.path) || !existsSync(f.path)) continue;
    seen.add(f.path);
    read(f, f.path);
  }
  for (const f of PROJECT_HOOK_FILES) {
    const path = resolve(opts.cwd, f.path);
    // A workspace at the home directory: its files are the user's, read once.
    if (seen.has(path) || !existsSync(path)) continue;
    if (opts.trusted) {
      read(f, path);
      continue;
    }
    if (hasHooks(path))
      out.warnings.push(
        `${path}: its ${f.dialect} hooks do not run: this workspace is not trusted (list it in trustedProjects in the user config)`,
      );
  }
  return out;
}

function hasHooks(path: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { hooks?: unknown };
    return typeof doc === 'object' && doc !== null && doc.hooks !== undefined;
  } catch {
    return true; // unreadable: say it is not run rather than nothing
  }
}
