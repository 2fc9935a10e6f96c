/**
 * dsh's secrets in an editor's text. The editor opens files by name and may keep a buffer it
 * loaded through a link some other time (a background job swapped the file for a link to dsh's
 * config while the editor reloaded it, then put it back): checking the path around the request
 * cannot see that. But the one thing the editor can reach that the local tools cannot is dsh's
 * own secrets (the sandbox hides only dsh's config files), so an editor text holding one is
 * refused whatever path it came by.
 *
 * The secrets are the configured ones (`configuredSecrets`: every provider key, header value and
 * URL credential, from the environment or the files), and the secret-looking values of the config
 * files policy hides (string values under a key named like a key, token, secret, password or
 * credential, at any depth: an MCP stdio server's `env` token is not a configured secret but is
 * in the hidden file all the same).
 */
import { readFile } from 'node:fs/promises';
import { MIN_SECRET_LENGTH, secretValues } from '../llm/failures.js';

const SECRET_NAME = /key|token|secret|passw|credential|auth|cookie/i;

/** The string values under secret-looking names anywhere in `value` (a parsed JSON document). */
export function secretLookingValues(value: unknown, name = ''): string[] {
  if (typeof value === 'string') return SECRET_NAME.test(name) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((v) => secretLookingValues(v, name));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => secretLookingValues(v, SECRET_NAME.test(k) ? k : name));
  return [];
}

/** The secret-looking values of the hidden files (a file that cannot be read or parsed gives none). */
export async function hiddenFileSecrets(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    try {
      out.push(...secretLookingValues(JSON.parse(await readFile(p, 'utf8'))));
    } catch {
      // Not JSON (or gone): its configured secrets are still in the configured list.
    }
  }
  return secretValues(out);
}

/**
 * Whether `text` holds one of `secrets` (values shorter than a secret are ignored), as written or
 * as a JSON string writes it: a config file may spell its key with escapes (`\u0073k-…`, `\/`),
 * and the editor's text of that file is the file as written, which holds the decoded value nowhere.
 */
export function holdsSecret(text: string, secrets: readonly string[]): boolean {
  const long = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH);
  if (long.length === 0) return false;
  const decoded = text.includes('\\') ? decodeJsonEscapes(text) : text;
  return long.some((s) => text.includes(s) || decoded.includes(s));
}

const JSON_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** `text` with every JSON string escape (`\uXXXX`, `\"`, `\/`, …) decoded, wherever it stands. */
function decodeJsonEscapes(text: string): string {
  return text.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g, (m, hex: string | undefined, c: string | undefined) =>
    hex !== undefined ? String.fromCharCode(Number.parseInt(hex, 16)) : (JSON_ESCAPES[c!] ?? m),
  );
}
