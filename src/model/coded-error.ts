/**
 * The one base class of dsh's refusals and failures. Every layer's error (`SessionError`,
 * `LlmError`, `ToolError`, `StoreError`, `ConfigError`, `CliError`, …) is a `CodedError`: a
 * message for people and a stable upper-case `code` for programs (scripts match it in `--json`
 * output; logs record it). Layers add their own fields (`details`, `file`, `failure`, …).
 *
 * The CLI recognises these by type (`instanceof CodedError`) and prints them as one line with the
 * code, no stack; anything else that reaches it is reported as an internal error.
 */
export class CodedError<Code extends string = string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CodedError';
    this.code = code;
  }
}
