/**
 * Registry names for MCP tools: `server__tool`, within the providers' 64-character
 * `[a-zA-Z0-9_-]` limit. Characters outside the set become `_`; a name that is too long (or
 * collides after that) is cut and given a short hash of the original, so it stays stable
 * across runs and unique within the server.
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;

const clean = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');
const hash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 8);

export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const full = `${clean(server)}__${clean(tool)}`;
  if (full.length <= MAX_TOOL_NAME && !taken.has(full) && clean(tool) === tool) return full;
  const suffix = `_${hash(`${server}\0${tool}`)}`;
  return `${full.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
}
