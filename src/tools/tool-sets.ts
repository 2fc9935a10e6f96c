/**
 * The names of the agent presets (dsh's tool sets), apart from the tools themselves: the CLI's
 * option parsing offers them to every command, and importing `coding-tools.ts` for two names
 * loaded every built-in tool (~30 modules) into `dsh --version` and `dsh log show` alike.
 */

/**
 * Which tools the model gets (dsh's agent presets): `standard`, the built-ins; `minimal`, dsh's
 * two-tool surface, a persistent-shell `bash` and `str_replace_editor`.
 */
export const TOOL_SETS = ['standard', 'minimal'] as const;
export type ToolSet = (typeof TOOL_SETS)[number];

export function isToolSet(v: unknown): v is ToolSet {
  return typeof v === 'string' && (TOOL_SETS as readonly string[]).includes(v);
}
