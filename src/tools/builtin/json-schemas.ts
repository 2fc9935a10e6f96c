// Generated from schemas.ts by test/tools/builtin-schemas.test.ts; do not edit. After changing a
// schema: npx vitest run test/tools/builtin-schemas.test.ts -u
import type { JsonObject } from '../../model/json.js';
import { freezeJsonInPlace } from '../../session/json.js';

export type BuiltinSchemaName =
  | 'bash'
  | 'job_output'
  | 'job_kill'
  | 'job_list'
  | 'read'
  | 'write'
  | 'edit'
  | 'glob'
  | 'grep'
  | 'todo_write'
  | 'persistent_bash'
  | 'str_replace_editor';

export const BUILTIN_JSON_SCHEMAS: Readonly<Record<BuiltinSchemaName, JsonObject>> = freezeJsonInPlace(
  {
    bash: {
      "type": "object",
      "properties": {
        "command": {"type":"string","minLength":1,"description":"The bash command to execute."},
        "description": {
          "description": "Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI).",
          "type": "string",
        },
        "timeoutMs": {
          "description": "Timeout in milliseconds. A default applies, and a cap; the command is killed on expiry.",
          "type": "number",
          "exclusiveMinimum": 0,
        },
        "workdir": {
          "description": "Working directory for this command. Defaults to the workspace root; a relative path resolves against it.",
          "type": "string",
        },
        "run_in_background": {
          "description": 
            "Run in the background and return a job id immediately (collect with job_output, stop with job_kill). No timeout applies.",
          "type": "boolean",
        },
        "sandbox_permissions": {
          "description": "Ask to run this one command outside the file sandbox; needs approval. Give a justification.",
          "type": "string",
          "enum": ["danger-full-access"],
        },
        "justification": {"description":"Why this command needs to leave the sandbox (shown to the approver).","type":"string"},
      },
      "required": ["command"],
      "additionalProperties": false,
    },
    job_output: {
      "type": "object",
      "properties": {
        "job_id": {"type":"string","minLength":1,"description":"Job id returned by the tool that started the background work."},
        "wait": {
          "description": 
            "Block until the job finishes or the timeout expires. A timed-out wait returns [status: running] and leaves the job alive.",
          "type": "boolean",
        },
        "timeout_ms": {
          "description": "Max wait in milliseconds (only with wait: true). Defaults to 30000.",
          "type": "number",
          "exclusiveMinimum": 0,
        },
      },
      "required": ["job_id"],
      "additionalProperties": false,
    },
    job_kill: {
      "type": "object",
      "properties": {
        "job_id": {"type":"string","minLength":1,"description":"Job id returned by the tool that started the background work."},
        "reason": {"description":"Optional short reason, recorded in the log.","type":"string"},
      },
      "required": ["job_id"],
      "additionalProperties": false,
    },
    job_list: {"type":"object","properties":{},"additionalProperties":false},
    read: {
      "type": "object",
      "properties": {
        "file_path": {"type":"string","description":"Path to read: relative to the workspace root, or absolute inside it."},
        "offset": {"description":"1-based first line to return. Defaults to 1.","type":"number","minimum":1},
        "limit": {"description":"Maximum number of lines to return. Defaults to 2000.","type":"number","minimum":1},
      },
      "required": ["file_path"],
      "additionalProperties": false,
    },
    write: {
      "type": "object",
      "properties": {
        "file_path": {
          "type": "string",
          "description": "Path to write: relative to the workspace root, or absolute inside it. Parent directories are created.",
        },
        "content": {"type":"string","description":"Full UTF-8 text content to write."},
        "sandbox_permissions": {
          "description": "Request one-call escalation out of the sandbox; needs approval. Only with a justification.",
          "type": "string",
          "enum": ["danger-full-access"],
        },
        "justification": {"description":"Why the escalation is needed (shown to the approver).","type":"string"},
      },
      "required": ["file_path","content"],
      "additionalProperties": false,
    },
    edit: {
      "type": "object",
      "properties": {
        "file_path": {"type":"string","description":"Path to edit: relative to the workspace root, or absolute inside it."},
        "old_string": {"type":"string","minLength":1,"description":"Literal text to replace. Must match exactly, including whitespace."},
        "new_string": {"type":"string","description":"Literal replacement text. Use an empty string to delete the match."},
        "replace_all": {
          "description": "Replace all matches. Defaults to false; when false, old_string must appear exactly once.",
          "type": "boolean",
        },
        "sandbox_permissions": {
          "description": "Request one-call escalation out of the sandbox; needs approval. Only with a justification.",
          "type": "string",
          "enum": ["danger-full-access"],
        },
        "justification": {"description":"Why the escalation is needed (shown to the approver).","type":"string"},
      },
      "required": ["file_path","old_string","new_string"],
      "additionalProperties": false,
    },
    glob: {
      "type": "object",
      "properties": {
        "pattern": {
          "type": "string",
          "minLength": 1,
          "description": 
            "Glob pattern (e.g. \"**/*.ts\", \"src/**/*.test.js\"). A pattern with no \"/\" matches the basename at any depth; include " +
            "a \"/\" to anchor it.",
        },
        "path": {
          "description": "Directory to search in. Defaults to the workspace root; a relative path resolves against it.",
          "type": "string",
        },
      },
      "required": ["pattern"],
      "additionalProperties": false,
    },
    grep: {
      "type": "object",
      "properties": {
        "pattern": {"type":"string","minLength":1,"description":"Regular expression to search for (ripgrep syntax)."},
        "path": {
          "description": "File or directory to search. Defaults to the workspace root; a relative path resolves against it.",
          "type": "string",
        },
        "include": {
          "description": 
            "One glob filter for which files to search (e.g. \"*.ts\", \"*.{js,jsx}\"). Not a list; negation is not supported.",
          "type": "string",
        },
      },
      "required": ["pattern"],
      "additionalProperties": false,
    },
    todo_write: {
      "type": "object",
      "properties": {
        "todos": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "content": {"type":"string","minLength":1,"description":"What the task is: a short imperative line."},
              "status": {
                "type": "string",
                "enum": ["pending","in_progress","completed"],
                "description": "pending (not started) | in_progress (now) | completed (done).",
              },
            },
            "required": ["content","status"],
            "additionalProperties": false,
          },
          "description": "The COMPLETE task list, replacing any previous list.",
        },
      },
      "required": ["todos"],
      "additionalProperties": false,
    },
    persistent_bash: {
      "type": "object",
      "properties": {
        "command": {
          "type": "string",
          "minLength": 1,
          "description": "The bash command to run in the persistent shell. Its stdin is empty (/dev/null).",
        },
        "timeoutMs": {
          "description": 
            "Timeout in milliseconds. A default applies, and a cap; on expiry the shell is killed and the next call starts a new one.",
          "type": "number",
          "exclusiveMinimum": 0,
        },
      },
      "required": ["command"],
      "additionalProperties": false,
    },
    str_replace_editor: {
      "type": "object",
      "properties": {
        "command": {"type":"string","enum":["view","create","str_replace","insert"],"description":"view | create | str_replace | insert."},
        "path": {"type":"string","description":"Absolute path of the file or directory, inside the workspace."},
        "file_text": {"description":"create: the content of the new file.","type":"string"},
        "old_str": {"description":"str_replace: the exact text to replace; it must occur exactly once in the file.","type":"string"},
        "new_str": {"description":"str_replace: the replacement (default empty). insert: the text to insert.","type":"string"},
        "insert_line": {
          "description": "insert: the line after which new_str goes (0 puts it first).",
          "type": "integer",
          "minimum": -9007199254740991,
          "maximum": 9007199254740991,
        },
        "view_range": {
          "description": "view of a file: [first, last] line numbers, 1-based and inclusive; last -1 means to the end.",
          "type": "array",
          "items": {"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991},
        },
      },
      "required": ["command","path"],
      "additionalProperties": false,
    },
  },
  { eventType: 'tool schema', path: '$' },
);
