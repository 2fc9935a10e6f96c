/** The tool registry: what the model may call, and the schemas it is shown. */
import { CodedError } from '../model/coded-error.js';
import type { ToolSchema } from '../model/request.js';
import type { JsonObject } from '../model/json.js';
import type { Disposer } from '../hooks/bus.js';
import type { ToolDefinition, JsonSchemaParameters } from './types.js';
import { isZodSchema, zodJsonSchema } from './zod-check.js';

export class ToolRegistryError extends CodedError<'DUPLICATE_TOOL' | 'INVALID_TOOL'> {
  constructor(code: 'DUPLICATE_TOOL' | 'INVALID_TOOL', message: string) {
    super(code, message);
    this.name = 'ToolRegistryError';
  }
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function isJsonSchemaParameters(p: ToolDefinition['parameters']): p is JsonSchemaParameters {
  return typeof p === 'object' && p !== null && 'jsonSchema' in p && !isZodSchema(p);
}

/** The JSON Schema the model sees for a tool's parameters. */
export function parametersSchema(def: ToolDefinition): JsonObject {
  if (isJsonSchemaParameters(def.parameters)) return def.parameters.jsonSchema;
  return zodJsonSchema(def.parameters);
}

export class ToolRegistry {
  private readonly tools = new Map<string, { def: ToolDefinition; schema: ToolSchema }>();

  register(def: ToolDefinition): Disposer {
    if (!TOOL_NAME.test(def.name)) {
      throw new ToolRegistryError(
        'INVALID_TOOL',
        `tool name "${def.name}" must be 1-64 characters of [a-zA-Z0-9_-] (a provider requirement)`,
      );
    }
    if (this.tools.has(def.name)) throw new ToolRegistryError('DUPLICATE_TOOL', `a tool named "${def.name}" is already registered`);
    const entry = { def, schema: { name: def.name, description: def.description, parameters: parametersSchema(def) } };
    this.tools.set(def.name, entry);
    return () => {
      if (this.tools.get(def.name) === entry) this.tools.delete(def.name);
    };
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name)?.def;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Schemas in registration order (the order is part of the logged request header). */
  schemas(): ToolSchema[] {
    return [...this.tools.values()].map((t) => t.schema);
  }
}
