/**
 * A Claude Code or Codex hook configuration, read into one shape: per hook event, matcher groups
 * of command hooks, in file order. Both agents use the same layout
 * (`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": …,
 * "timeout": seconds}]}]}}`), in `.claude/settings.json` (other keys beside `hooks` ignored) or a
 * `hooks.json`. What differs between the dialects (matcher semantics, payload extras) is a
 * `dialect` field the bridge reads.
 *
 * A file that cannot be used is refused whole with a typed error naming the file and the JSON
 * path (an unreadable file, bad JSON, a wrong shape, a matcher that is not a valid regular
 * expression): running some of a project's hooks and silently not others would be worse than
 * running none. Hooks of a kind this bridge does not run (events it has no seam for, handlers
 * other than `command`) are listed as warnings, never dropped silently.
 */
import { readFileSync } from 'node:fs';
import { CodedError } from '../../model/coded-error.js';

export type HookDialect = 'claude-code' | 'codex';

/** The hook events the bridge runs, each at one seam of the loop (see plugin.ts). */
export const HOOK_POINTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart'] as const;
export type HookPoint = (typeof HOOK_POINTS)[number];

/** Points whose matcher is tested (the tool name, or the session source); the others run always. */
export const MATCHED_POINTS: ReadonlySet<HookPoint> = new Set(['PreToolUse', 'PostToolUse', 'SessionStart']);

export interface CommandHook {
  command: string;
  /** Seconds, as both agents write it (`timeout`; Codex also `timeoutSec`). */
  timeoutSec?: number;
}

export interface MatcherGroup {
  matcher?: string;
  /** The matcher compiled; absent = matches everything. */
  test: (subject: string) => boolean;
  hooks: CommandHook[];
}

export interface HookConfig {
  dialect: HookDialect;
  file: string;
  points: Map<HookPoint, MatcherGroup[]>;
  warnings: string[];
}

export type HookConfigCode = 'HOOK_CONFIG_UNREADABLE' | 'HOOK_CONFIG_NOT_JSON' | 'HOOK_CONFIG_INVALID';

export class HookConfigError extends CodedError<HookConfigCode> {
  constructor(
    code: HookConfigCode,
    message: string,
    readonly file: string,
    readonly path?: string,
  ) {
    super(code, message);
    this.name = 'HookConfigError';
  }
}

/** Read and check one hook configuration file. */
export function readHookConfig(file: string, dialect: HookDialect): HookConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new HookConfigError('HOOK_CONFIG_UNREADABLE', `${file}: cannot read: ${(e as Error).message}`, file);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new HookConfigError('HOOK_CONFIG_NOT_JSON', `${file}: not JSON: ${(e as Error).message}`, file);
  }
  return parseHookConfig(doc, file, dialect);
}

export function parseHookConfig(doc: unknown, file: string, dialect: HookDialect): HookConfig {
  const bad = (path: string, what: string): HookConfigError =>
    new HookConfigError('HOOK_CONFIG_INVALID', `${file}: ${path}: ${what}`, file, path);
  const config: HookConfig = { dialect, file, points: new Map(), warnings: [] };
  if (!isObject(doc)) throw bad('$', 'expected an object');
  if (doc.hooks === undefined) return config;
  if (!isObject(doc.hooks)) throw bad('$.hooks', 'expected an object of hook events');
  for (const [event, groups] of Object.entries(doc.hooks)) {
    const at = `$.hooks.${event}`;
    if (!Array.isArray(groups)) throw bad(at, 'expected an array of matcher groups');
    const point = (HOOK_POINTS as readonly string[]).includes(event) ? (event as HookPoint) : undefined;
    if (!point) {
      config.warnings.push(`${file}: ${at}: ${dialect} hook event "${event}" is not run by dsh (it runs ${HOOK_POINTS.join(', ')})`);
      continue;
    }
    const out: MatcherGroup[] = [];
    groups.forEach((g, i) => {
      const gat = `${at}[${i}]`;
      if (!isObject(g)) throw bad(gat, 'expected an object with "hooks"');
      if (g.matcher !== undefined && typeof g.matcher !== 'string') throw bad(`${gat}.matcher`, 'expected a string');
      if (!Array.isArray(g.hooks)) throw bad(`${gat}.hooks`, 'expected an array of hooks');
      const matcher = g.matcher as string | undefined;
      // A point without a subject ignores its matcher, as both agents do; it is not compiled.
      const test = MATCHED_POINTS.has(point)
        ? compileMatcher(matcher, dialect, () => bad(`${gat}.matcher`, 'not a valid regular expression'))
        : all;
      const hooks: CommandHook[] = [];
      g.hooks.forEach((h, j) => {
        const hat = `${gat}.hooks[${j}]`;
        if (!isObject(h)) throw bad(hat, 'expected an object');
        if (h.type !== 'command') {
          config.warnings.push(`${file}: ${hat}: a hook of type ${JSON.stringify(h.type)} is not run by dsh (only "command")`);
          return;
        }
        if (h.async === true) {
          config.warnings.push(`${file}: ${hat}: an async hook is not run by dsh`);
          return;
        }
        if (typeof h.command !== 'string' || h.command.trim() === '') throw bad(`${hat}.command`, 'expected a non-empty string');
        const t = h.timeout ?? h.timeoutSec;
        if (t !== undefined && (typeof t !== 'number' || !Number.isFinite(t) || t <= 0))
          throw bad(`${hat}.timeout`, 'expected a positive number of seconds');
        hooks.push(t === undefined ? { command: h.command } : { command: h.command, timeoutSec: t as number });
      });
      if (hooks.length) out.push({ ...(matcher !== undefined ? { matcher } : {}), test, hooks });
    });
    if (out.length) config.points.set(point, [...(config.points.get(point) ?? []), ...out]);
  }
  return config;
}

const all = (): boolean => true;

/**
 * Claude Code: empty or `*` matches everything; a plain name (letters, digits, `_`, `|`) is an
 * exact name or `|`-separated list; anything else is a regular expression over the whole name.
 * Codex: the matcher is always a regular expression, unanchored.
 */
export function compileMatcher(matcher: string | undefined, dialect: HookDialect, invalid: () => Error): (subject: string) => boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return all;
  if (dialect === 'claude-code' && /^[A-Za-z0-9_|]+$/.test(matcher)) {
    const names = new Set(matcher.split('|'));
    return (s) => names.has(s);
  }
  let re: RegExp;
  try {
    re = new RegExp(dialect === 'claude-code' ? `^(?:${matcher})$` : matcher);
  } catch {
    throw invalid();
  }
  return (s) => re.test(s);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
