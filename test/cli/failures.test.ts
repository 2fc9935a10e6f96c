/**
 * How `main` reports a failure that reaches it (issue 12 item 4): a `CodedError`, whatever its
 * layer, is recognised by type and printed as one line with its code; a Node system error (an fs
 * or socket call) likewise; anything else is an internal error, even when it carries a
 * code-like string, since nothing vouches for that code being stable.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { reportFailure } from '../../src/cli/main.js';
import { CliError } from '../../src/cli/errors.js';
import { oneLine } from '../../src/cli/text.js';
import { Output, type Io } from '../../src/cli/output.js';
import { CodedError } from '../../src/model/coded-error.js';
import { LlmError } from '../../src/model/failure.js';
import { ConfigError } from '../../src/config/config.js';
import { StoreError } from '../../src/store/errors.js';
import { ToolError } from '../../src/tools/types.js';
import { FsError } from '../../src/tools/fs/errors.js';
import { ViewerError } from '../../src/viewer/errors.js';
import { OtelExportError } from '../../src/observability/errors.js';
import { CompactionError } from '../../src/compaction/errors.js';
import { GlobSyntaxError } from '../../src/tools/glob-match.js';

function report(e: unknown): { status: number; stderr: string } {
  let stderr = '';
  const io: Io = {
    out: new Output({ write: () => undefined }, false),
    err: new Output({ write: (s: string) => (stderr += s) }, false),
    env: {},
  } as unknown as Io;
  const status = reportFailure(e, io);
  io.err.flush();
  return { status, stderr };
}

describe('reportFailure', () => {
  it('prints any CodedError as one line with its code, exit 1', () => {
    const errors: CodedError[] = [
      new LlmError({ code: 'AUTH', message: 'the key was refused' }),
      new ConfigError('CONFIG_INVALID', 'bad config', '/x/config.json'),
      new StoreError('SESSION_NOT_FOUND', 'no session abc'),
      new ToolError('MCP_TIMEOUT', 'no answer'),
      new FsError('FS_NOT_FOUND', 'not found'),
      new ViewerError('HOST_NOT_ALLOWED', 'loopback only'),
      new OtelExportError('ENDPOINT_UNREACHABLE', 'refused'),
      new CompactionError('SUMMARY_EMPTY', 'no text'),
      new GlobSyntaxError('pattern "\\\\" ends with a lone backslash'),
      // A code no layer declares, in lower case: the type vouches for it, not its spelling.
      new CodedError('plugin_failure', 'a plugin gave up'),
    ];
    for (const e of errors) {
      expect(e).toBeInstanceOf(CodedError);
      // The message goes through the one-line escape (its own tests in text.test.ts): the glob
      // pattern's backslash pair is shown so that it reads back to exactly that pair.
      expect(report(e)).toEqual({ status: 1, stderr: `dsh: ${oneLine(e.message)} [${e.code}]\n` });
    }
  });

  it("keeps CliError's own form (the file, and exit 2 for usage errors)", () => {
    expect(report(new CliError('NO_TASK', 'no task given'))).toEqual({ status: 2, stderr: 'dsh: no task given [NO_TASK]\n' });
    expect(report(new CliError('FILE_NOT_FOUND', 'not found', { file: '/tmp/x' }))).toEqual({
      status: 1,
      stderr: 'dsh: /tmp/x: not found [FILE_NOT_FOUND]\n',
    });
  });

  it('prints a Node system error with its code', () => {
    let e: unknown;
    try {
      readFileSync('/nonexistent/dsh-failures-test');
    } catch (x) {
      e = x;
    }
    expect(report(e)).toEqual({
      status: 1,
      stderr: "dsh: ENOENT: no such file or directory, open '/nonexistent/dsh-failures-test' [ENOENT]\n",
    });
  });

  it('calls anything else an internal error, a code-like string on a plain Error included', () => {
    const fake = Object.assign(new Error('looks coded'), { code: 'SESSION_NOT_FOUND' });
    expect(report(fake)).toEqual({ status: 1, stderr: 'dsh: internal error: looks coded (DSH_DEBUG=1 prints the stack trace)\n' });
    // Node's own argument errors carry ERR_* codes but no syscall: a bug in dsh, not a refusal.
    let e: unknown;
    try {
      Buffer.alloc(-1);
    } catch (x) {
      e = x;
    }
    expect((e as { code?: unknown }).code).toBe('ERR_OUT_OF_RANGE');
    expect(report(e).stderr).toMatch(/^dsh: internal error: /);
    expect(report('a string')).toEqual({ status: 1, stderr: 'dsh: internal error: a string (DSH_DEBUG=1 prints the stack trace)\n' });
  });
});
