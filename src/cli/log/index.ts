/** The `dsh log` command group: reading session logs. One module per subcommand. */
import { Command, InvalidArgumentError } from 'commander';
import type { Io } from '../output.js';
import { resolveLogArg } from '../session-ref.js';
import { runCheck, type CheckOptions } from './check.js';
import { runMessages, type MessagesOptions } from './messages.js';
import { runShow, type ShowOptions } from './show.js';
import type { ExportOptions } from './export.js';
import type { ImportOptions } from './import.js';

export type SetExit = (code: number) => void;

function integer(min: number, what: string): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected ${what} (an integer ≥ ${min})`);
    return n;
  };
}

/** Checked when parsed, so a bad endpoint is a usage error naming the flag, before the log is read. */
function httpUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http(s) URL, e.g. http://localhost:4318/v1/traces');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidArgumentError('expected an http(s) URL, e.g. http://localhost:4318/v1/traces');
  return value;
}

export function registerLog(program: Command, io: Io, setExit: SetExit): void {
  const log = program
    .command('log')
    .description("read session logs: dsh's JSONL, and other agents' (Claude Code, Codex, pi, OpenHands, SWE-agent) as imported")
    .addHelpText(
      'after',
      `
Every log command also reads other agents' logs, detected by content: Claude Code transcripts,
Codex rollouts, pi sessions, OpenHands trajectories and event streams, SWE-agent .traj files.
A file holding several sessions (sidechains, evaluation records) names one as FILE#key.`,
    );

  log
    .command('check')
    .description('validate session logs: each problem with file, line, seq and rule, then a summary per file')
    .argument('<file...>', 'session log files (.jsonl) or stored session ids; - reads standard input')
    .option('--strict', 'fail on warnings too (placeholders, torn tail, crash repair, legacy imports)')
    .option('-q, --quiet', 'print errors and summaries only, not warnings')
    .option('--json', 'print one JSON report instead of text')
    .addHelpText(
      'after',
      `
Exit status: 0 when every file loads (and, with --strict, has no warnings), 1 otherwise,
2 for a usage error.

Examples:
  dsh log check examples/fix-typo.jsonl
  dsh log check --strict --json logs/*.jsonl`,
    )
    .action(async (files: string[], opts: CheckOptions) => {
      // One argument that names no single session (ambiguous, compressed) fails as that file,
      // like a missing file does; the others are still checked.
      const inputs = await Promise.all(files.map((f) => resolveLogArg(f, io.env).catch((error: unknown) => ({ file: f, error }))));
      setExit(runCheck(inputs, opts, io));
    });

  log
    .command('show')
    .description('print a log as a timeline: turns, steps, messages, tool calls and results, usage')
    .argument('<file>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .option('--turn <n>', 'show only turn N', integer(1, 'a turn number'))
    .option('--full', 'do not truncate previews (text, arguments, tool output)')
    .addHelpText(
      'after',
      `
Stream chunks between two other events are collapsed to one line of counts
(e.g. "reasoning ×46 deltas, tool-call ×13 deltas · 2 blocks · usage · finish tool-calls").
Text from the log is shown with control characters escaped.

Examples:
  dsh log show examples/fix-typo.jsonl
  dsh log show --turn 2 --full examples/fix-typo.jsonl`,
    )
    .action(async (file: string, opts: ShowOptions) => setExit(runShow(await resolveLogArg(file, io.env), opts, io)));

  log
    .command('messages')
    .description('print the model-visible history derived from the log, as of any seq')
    .argument('<file>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .option('--at <seq>', 'history after the event with this seq (default: the end of the log)', integer(0, 'a seq'))
    .option('--json', 'print the exact message objects as a JSON array')
    .option('--brief', 'one line per content block')
    .addHelpText(
      'after',
      `
Examples:
  dsh log messages examples/fix-typo.jsonl
  dsh log messages --at 40 --json examples/fix-typo.jsonl`,
    )
    .action(async (file: string, opts: MessagesOptions) => setExit(runMessages(await resolveLogArg(file, io.env), opts, io)));

  log
    .command('export')
    .description('send the session as OpenTelemetry GenAI traces (one per turn) to an OTLP/HTTP endpoint')
    .argument('<file>', 'session log file (.jsonl) or stored session id')
    .requiredOption('--otlp <url>', 'OTLP/HTTP traces endpoint, e.g. http://localhost:4318/v1/traces', httpUrl)
    .option('-H, --header <name=value>', 'an HTTP header for the endpoint (repeatable), e.g. authorization=Bearer …', (v: string, prev: string[] = []) => {
      if (v.indexOf('=') <= 0) throw new InvalidArgumentError('expected NAME=VALUE');
      return [...prev, v];
    })
    .option('--content <mode>', 'none (default) or full: also send prompts, completions and tool data, size-capped', (v: string) => {
      if (v !== 'none' && v !== 'full') throw new InvalidArgumentError('expected none or full');
      return v;
    })
    .option('--service-name <name>', 'the service.name resource attribute (default dsh)')
    .option('--json', 'print the export summary as JSON')
    .addHelpText(
      'after',
      `
Built from the log alone: re-exporting a log sends the same trace and span ids, so a receiver can
deduplicate. Message content stays out unless --content full. See docs/observability.md.

Examples:
  dsh log export --otlp http://localhost:4318/v1/traces examples/fix-typo.jsonl
  dsh log export --otlp https://cloud.langfuse.com/api/public/otel/v1/traces -H "authorization=Basic …" 3f2a`,
    )
    .action(async (file: string, opts: ExportOptions) => {
      const { runExport } = await import('./export.js');
      setExit(await runExport(file, opts, io));
    });

  log
    .command('import')
    .description("write another agent's log as a dsh log, reporting per field what has no dsh event")
    .argument('<file>', "another agent's log (Claude Code, Codex, pi, OpenHands, SWE-agent); FILE#key for one of its sessions; - reads standard input")
    .option('-o, --out <file>', 'write the dsh log here (other sessions of the file beside it, as OUT.<key>.jsonl); default: standard output')
    .option('--json', 'print the report (sessions, events, losses per field) as JSON')
    .addHelpText(
      'after',
      `
The format is detected from the content. What the source holds that has no dsh event is counted
per field and reported (never dropped silently). See docs/import.md.

Examples:
  dsh log import ~/.claude/projects/my-app/0b1c….jsonl -o session.jsonl
  dsh log import rollout-2026-02-23T12-54-34-….jsonl --json > report.json`,
    )
    .action(async (file: string, opts: ImportOptions) => {
      const { runImport } = await import('./import.js');
      setExit(await runImport(file, opts, io));
    });
}
