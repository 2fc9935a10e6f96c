/**
 * The tool seam. A tool declares its parameters once (a zod schema, or a raw JSON Schema for tools
 * that arrive from elsewhere, e.g. MCP servers); the model sees the JSON Schema, and the pipeline
 * validates the model's arguments against it before the tool runs (`INVALID_ARGS`, never a crash).
 */
import { CodedError } from '../model/coded-error.js';
import type { output, ZodType } from 'zod';
import type { CallId, ContentBlock, UserMessage } from '../model/message.js';
import type { JsonObject, JsonValue } from '../model/json.js';
import type { Session } from '../session/session.js';
import type { HookBus } from '../hooks/bus.js';
import type { ArgsCheck } from './zod-check.js';

/**
 * A raw JSON Schema with an optional validator (zod schemas validate themselves). The validator
 * may be asynchronous: the built-in tools load their zod schemas with the first call.
 */
export interface JsonSchemaParameters {
  jsonSchema: JsonObject;
  validate?(args: unknown): ArgsCheck | Promise<ArgsCheck>;
}

export interface ToolResultValue {
  content: ContentBlock[] | string;
  isError?: boolean;
  /** Failure identity kept in the log (`tool/result.error`), e.g. `{name:'FsError', code:'FS_NOT_FOUND'}`. */
  error?: { name: string; code: string };
  /** Tool-private presentation payload, kept in the log, never shown to the model. */
  meta?: JsonValue;
}

export type ToolOutput = string | ContentBlock[] | ToolResultValue;

export interface ToolRunContext {
  readonly callId: CallId;
  readonly toolName: string;
  /** Aborts on cancel, and when a `tools/execute` wrapper (e.g. a timeout) decides so. */
  readonly signal: AbortSignal;
  /** Workspace root. */
  readonly cwd: string;
  readonly session: Session;
  readonly bus: HookBus;
  readonly turn: number;
  readonly step: number;
  /** Put context in front of the model at its next step (recorded there as a user/message). */
  deferContext(content: string | ContentBlock[]): void;
  /** Ask the loop to end the turn once this step's tools are done (unless new input is owed). */
  concludeTurn(): void;
}

// biome-ignore lint/suspicious/noExplicitAny: a tool list holds definitions of differing argument types (parameters are invariant in A)
export interface ToolDefinition<A = any> {
  name: string;
  description: string;
  parameters: ZodType<A> | JsonSchemaParameters;
  execute(args: A, ctx: ToolRunContext): ToolOutput | Promise<ToolOutput>;
  /** Exactly `true` lets this call run beside others; anything else makes it a barrier. */
  isConcurrencySafe?(args: A): boolean;
  /** The pipeline aborts the body after this long (`TIMEOUT` result). */
  timeoutMs?: number;
  /** What approval policy needs to know about this tool; absent means `effects: 'external'`. */
  permission?: ToolPermissionInfo<A>;
}

/**
 * Declare a tool whose argument type comes from its zod schema. An object literal typed as a bare
 * `ToolDefinition` defaults its arguments to `any`, so a typo in `execute` would go unnoticed;
 * here `execute`, `isConcurrencySafe` and `permission.subject` see the schema's parsed output.
 * Returns the definition unchanged.
 */
export function defineTool<S extends ZodType>(
  tool: Omit<ToolDefinition<output<S>>, 'parameters'> & { parameters: S },
): ToolDefinition<output<S>> {
  return tool as ToolDefinition<output<S>>;
}

/**
 * Where a tool's effects land, so policy can tell what the sandbox already contains:
 * `none` (reads only), `fs` (writes through the filesystem seam, so confinement and the sandbox
 * mode apply), `shell` (runs processes, contained only where the shell sandbox is enforced),
 * `external` (anything else, e.g. an MCP server: nothing local contains it).
 */
export type ToolEffects = 'none' | 'fs' | 'shell' | 'external';

// biome-ignore lint/suspicious/noExplicitAny: as ToolDefinition, whose permission info this is
export interface ToolPermissionInfo<A = any> {
  effects: ToolEffects;
  /** What a rule's pattern is matched against, e.g. `bash(git status*)` or `edit(src/**)`. */
  subject?(args: A): { kind: 'command' | 'path'; value: string } | undefined;
}

/** Throw from a tool body to produce an error result with a stable code. */
export class ToolError<Code extends string = string> extends CodedError<Code> {
  override name = 'ToolError';
  constructor(
    code: Code,
    message: string,
    readonly meta?: JsonValue,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** What the pipeline hands back to the loop for one call. */
export interface ToolCallOutcome {
  content: ContentBlock[];
  isError: boolean;
  error?: { name: string; code: string };
  meta?: JsonValue;
  /** Context the tool deferred to the next step. */
  deferred: UserMessage[];
  concludesTurn: boolean;
}
