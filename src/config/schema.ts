/**
 * The config file's schema, composed from the sections each layer owns. Imported by the first
 * config file read (`parseConfig`), so zod loads only when there is a file to validate.
 */
import { z } from 'zod';
import { llmConfigShape } from '../llm/config.js';
import { pricesConfigShape } from '../llm/pricing-config.js';
import { mcpServersSchema, permissionsSchema, sandboxSchema } from '../tools/config.js';
import { compactionConfigShape } from '../compaction/config.js';

export const configShape = {
  /** Editors' schema pointer; ignored. */
  $schema: z.string().optional(),
  ...llmConfigShape,
  ...pricesConfigShape,
  mcpServers: mcpServersSchema.optional(),
  permissions: permissionsSchema.optional(),
  sandbox: sandboxSchema.optional(),
  ...compactionConfigShape,
  /** User config only: workspaces whose project config may loosen permissions. */
  trustedProjects: z.array(z.string().min(1)).optional(),
  /**
   * User config only: where sessions are stored, a `postgres://…` URL (docs/scale.md). Absent:
   * JSONL files under $DSH_HOME/sessions. The DSH_STORE environment variable overrides it.
   */
  store: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')
    .optional(),
};
export const ConfigSchema = z.strictObject(configShape);
export type DshConfig = z.infer<typeof ConfigSchema>;
