/**
 * Permission rules: `tool` or `tool(pattern)`.
 *
 * - The tool part is a name, or a glob over names (`everything__*`, `*`).
 * - The pattern is matched against the tool's *subject*: a shell command (`bash(git status*)`:
 *   `*` spans anything) or a path (`edit(src/**)`: workspace-relative, `/`-separated, `*` stays
 *   within one segment, `**` spans segments). A rule with a pattern never matches a tool without
 *   a subject of that kind.
 *
 * Compound shell commands: an *allow* rule matches only a command with no shell control
 * operators (`;`, `&`, `|`, `` ` ``, `$(`, `<`, `>`, newline) beyond those the pattern itself
 * spells, so `bash(git status*)` does not allow `git status; rm -rf ~`. *Deny* and *ask* rules
 * match the whole command or any simple command inside it, so `bash(rm *)` catches `make && rm x`.
 */
import { CodedError } from '../../model/coded-error.js';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { globToRegExp } from '../glob-match.js';

export class PermissionRuleError extends CodedError<'INVALID_PERMISSION_RULE'> {
  override name = 'PermissionRuleError';
  constructor(message: string) {
    super('INVALID_PERMISSION_RULE', message);
  }
}

export interface Subject {
  kind: 'command' | 'path';
  value: string;
}

export interface PermissionRule {
  /** The rule as written (quoted in decisions). */
  source: string;
  matches(toolName: string, subject: Subject | undefined, workspace: string): boolean;
}

const RULE = /^([A-Za-z0-9_*?-]+)(?:\((.*)\))?$/s;
const CONTROL = /[;&|`<>\n]|\$\(/;
const SPLIT = /\s*(?:;|&&|\|\||\||&|\n)\s*/;

function normalizePath(value: string, workspace: string): { rel: string; abs: string } {
  const abs = resolve(workspace, value);
  const r = relative(workspace, abs);
  const rel = r === '' ? '.' : r.startsWith('..') || isAbsolute(r) ? abs : r;
  return { rel: rel.split(sep).join('/'), abs: abs.split(sep).join('/') };
}

export function parseRule(source: string, kind: 'allow' | 'ask' | 'deny'): PermissionRule {
  const m = RULE.exec(source.trim());
  if (!m)
    throw new PermissionRuleError(
      `permission rule "${source}" must be written tool or tool(pattern), e.g. bash(git status*) or edit(src/**)`,
    );
  const toolRe = globToRegExp(m[1]!, 'text');
  const pattern = m[2];
  if (pattern === undefined) return { source, matches: (name) => toolRe.test(name) };
  if (pattern.trim() === '')
    throw new PermissionRuleError(`permission rule "${source}" has an empty pattern; write ${m[1]} to match every call`);
  const textRe = globToRegExp(pattern.trim(), 'text');
  const pathRe = globToRegExp(pattern.trim().replace(/^\.\//, ''), 'path');
  const patternHasControl = CONTROL.test(pattern);
  return {
    source,
    matches(name, subject, workspace) {
      if (!toolRe.test(name) || subject === undefined) return false;
      if (subject.kind === 'path') {
        const p = normalizePath(subject.value, workspace);
        return pathRe.test(p.rel) || pathRe.test(p.abs);
      }
      const cmd = subject.value.trim();
      if (kind === 'allow') return textRe.test(cmd) && (patternHasControl || !CONTROL.test(cmd));
      return textRe.test(cmd) || cmd.split(SPLIT).some((part) => part !== '' && textRe.test(part.replace(/^\(+|\)+$/g, '').trim()));
    },
  };
}

export interface RuleSet {
  allow: PermissionRule[];
  ask: PermissionRule[];
  deny: PermissionRule[];
}

export function parseRules(rules: { allow?: readonly string[]; ask?: readonly string[]; deny?: readonly string[] }): RuleSet {
  return {
    allow: (rules.allow ?? []).map((r) => parseRule(r, 'allow')),
    ask: (rules.ask ?? []).map((r) => parseRule(r, 'ask')),
    deny: (rules.deny ?? []).map((r) => parseRule(r, 'deny')),
  };
}

export function firstMatch(
  list: readonly PermissionRule[],
  name: string,
  subject: Subject | undefined,
  workspace: string,
): PermissionRule | undefined {
  return list.find((r) => r.matches(name, subject, workspace));
}

/** `s` as a glob that matches only itself: every character the glob dialect reads is escaped. */
export function escapeGlob(s: string): string {
  return s.replace(/[\\*?[\]{}]/g, '\\$&');
}

const TOOL_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * The narrowest rule that would allow this call: `bash(<the command>)`, `edit(<the path>)`, or the
 * tool's name for tools without a subject (MCP tools). The subject is escaped (escapeGlob), so the
 * rule matches exactly this call: `bash(ls [a-z].txt)` would also allow `ls a.txt`, and
 * `bash(printf 'x\n')` would not even match itself. A path is named as the rules see it
 * (workspace-relative, `/`-separated) when `workspace` is given.
 *
 * Undefined when no rule can name just this call: a multi-line command (rules are one line), a
 * path with leading or trailing spaces (a rule's pattern is trimmed), a tool name a rule cannot
 * spell. Never a blanket `bash`.
 */
export function ruleFor(name: string, args: string, workspace?: string): string | undefined {
  if (!TOOL_NAME.test(name)) return undefined;
  let parsed: Record<string, unknown> = {};
  try {
    const v = JSON.parse(args) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
  } catch {
    return undefined;
  }
  // Every built-in tool with a path subject (test/tools/rule-for.test.ts checks each tool set's tools).
  const isPath = ['read', 'write', 'edit', 'glob', 'grep', 'str_replace_editor'].includes(name);
  const subject = name === 'bash' ? parsed.command : isPath ? (parsed.file_path ?? parsed.path) : null;
  if (subject === null) return name;
  // A command's rule names only the command, so it would also allow it in any other directory:
  // a call with its own workdir gets no session rule (allow once only).
  if (name === 'bash' && parsed.workdir !== undefined && parsed.workdir !== '.' && parsed.workdir !== '') return undefined;
  if (typeof subject !== 'string' || subject.trim() === '' || /[\n\r]/.test(subject)) return undefined;
  if (isPath && subject !== subject.trim()) return undefined;
  const value = isPath && workspace !== undefined ? normalizePath(subject, workspace).rel : subject.trim();
  return `${name}(${escapeGlob(value)})`;
}
