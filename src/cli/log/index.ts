/** The `dsh log` command group: reading session logs. One module per subcommand. */
import { existsSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import type { Io } from '../output.js';
import { resolveLogArg } from '../session-ref.js';
import type { CheckOptions } from './check.js';
// Each subcommand's module is loaded when it runs: `dsh sessions` and `dsh --version` register these
// commands but must not load the log reader (and the legacy importers behind it) to do so.
import type { MessagesOptions } from './messages.js';
import type { ShowOptions } from './show.js';
import type { ExportOptions } from './export.js';
import type { ImportOptions } from './import.js';
import type { TurnOptions } from './turn.js';
import type { CallOptions } from './call.js';
import type { TraceOptions } from './trace.js';
import type { StatsOptions } from './stats.js';
// The alert kinds' own module, not the query index: parsing --alerts must not load the query layer.
import { ALERT_KINDS, DEFAULT_ALERTS, isAlertKind, type AlertKind } from '../../query/alerts.js';
import { parseSince } from './select.js';
import type { ConvertOptions } from './convert.js';

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
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http(s) URL, e.g. http://localhost:4318/v1/traces');
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
    .description(
      'validate session logs: each problem with file, line, seq and rule, then a summary per file; --alerts also checks what they recorded',
    )
    .argument('[file...]', 'session log files (.jsonl) or stored session ids; - reads standard input')
    .option('--strict', 'fail on warnings too (placeholders, torn tail, crash repair, legacy imports)')
    .option('-q, --quiet', 'print errors and summaries only, not warnings')
    .option('--json', 'print one JSON report instead of text')
    .option('--alerts [kinds]', `also fail on what the logs recorded: ${ALERT_KINDS.join(', ')} (default ${DEFAULT_ALERTS.join(',')})`)
    .option('-a, --all', 'check the stored sessions (with --alerts: for cron)')
    .option('--since <date>', 'stored sessions written since a date (2026-11-01) or an age (12h, 7d)', (v: string) => parseSince(v))
    .option('-C, --cwd <dir>', 'stored sessions of this workspace')
    .addHelpText(
      'after',
      `
Exit status: 0 when every file loads (and, with --strict, has no warnings, and with --alerts, no
alert fires), 1 otherwise, 2 for a usage error. Alerts: a turn that ended error, max-tokens or
blocked; a turn left open with no live writer (dangling); a tool call with no result
(unanswered); aborted and interrupted on request. Give the kinds as --alerts=error,dangling.

Examples:
  dsh log check examples/fix-typo.jsonl
  dsh log check --strict --json logs/*.jsonl
  dsh log check --alerts --all --since 1d          # in cron: exit 1 when an alert fires
  dsh log check --alerts=dangling,unanswered 3f2a`,
    )
    .action(
      async (
        given: string[],
        opts: CheckOptions & { alerts?: string | true; all?: boolean; since?: number; cwd?: string },
        cmd: Command,
      ) => {
        const files = [...given];
        let kinds: AlertKind[] | undefined;
        if (opts.alerts === true) kinds = [...DEFAULT_ALERTS];
        else if (opts.alerts !== undefined) {
          // An optional value swallows the next word (\`--alerts run.jsonl\`): a word that is no
          // list of alert kinds is a log (a path, or a session id, whose prefixes are hex).
          // \`--alerts=VALUE\` swallows nothing: its value is always the kinds.
          let root: Command = cmd;
          while (root.parent) root = root.parent;
          const attached = ((root as unknown as { rawArgs?: string[] }).rawArgs ?? []).some((a) => a.startsWith('--alerts='));
          const v = opts.alerts;
          const words = v.split(',');
          if (words.every((w) => isAlertKind(w))) kinds = words as AlertKind[];
          else if (attached || words.length > 1 || (/^[a-z]+(?:-[a-z]+)*$/.test(v) && !/^[0-9a-f-]+$/.test(v) && !existsSync(v))) {
            const bad = words.filter((w) => !isAlertKind(w)).map((w) => JSON.stringify(w));
            cmd.error(
              `error: option '--alerts [kinds]': ${bad.join(', ')} ` +
                `${bad.length === 1 ? 'is not an alert kind' : 'are not alert kinds'}; the kinds are ${ALERT_KINDS.join(', ')}` +
                ' (e.g. --alerts=error,dangling)',
              { exitCode: 2, code: 'commander.invalidArgument' },
            );
          } else {
            files.unshift(v);
            kinds = [...DEFAULT_ALERTS];
          }
        }
        const { runCheckCommand } = await import('./check.js');
        setExit(
          await runCheckCommand(files, { ...opts, ...(kinds ? { alerts: kinds } : {}) }, io, () =>
            cmd.error("error: missing required argument 'file'", { exitCode: 2, code: 'commander.missingArgument' }),
          ),
        );
      },
    );

  log
    .command('show')
    .description('print a log as a timeline: turns, steps, messages, tool calls and results, usage')
    .argument('<file>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .option('--turn <n>', 'show only turn N', integer(1, 'a turn number'))
    .option('--full', 'do not truncate previews (text, arguments, tool output)')
    .option(
      '-f, --follow',
      'then print each event as it is appended (by another process, or on any host for a session in PostgreSQL) until Ctrl-C',
    )
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
    .action(async (file: string, opts: ShowOptions & { follow?: boolean }) => {
      if (opts.follow) {
        const { runShowFollow } = await import('./follow.js');
        return setExit(await runShowFollow(file, opts, io));
      }
      const { runShow } = await import('./show.js');
      setExit(await runShow(await resolveLogArg(file, io.env), opts, io));
    });

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
    .action(async (file: string, opts: MessagesOptions) => {
      const { runMessages } = await import('./messages.js');
      setExit(await runMessages(await resolveLogArg(file, io.env), opts, io));
    });

  log
    .command('turn')
    .description('one turn (one run of the agent loop): how it ended, its figures, its steps, and every event in it')
    .argument('<log>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .argument('<n>', 'the turn number', integer(1, 'a turn number'))
    .option('--json', 'print the turn and every event in it (chunks included) as JSON')
    .option('--full', 'do not truncate previews in the timeline')
    .addHelpText(
      'after',
      `
A turn the log does not have is a usage error (exit 2, TURN_NOT_FOUND) naming the turns it has.

Examples:
  dsh log turn examples/fix-typo.jsonl 2
  dsh log turn --json 3f2a 1 | jq '.events | length'`,
    )
    .action(async (file: string, n: number, opts: TurnOptions) => {
      const { runTurn } = await import('./turn.js');
      setExit(await runTurn(await resolveLogArg(file, io.env), n, opts, io));
    });

  log
    .command('call')
    .description(
      "one tool call's round trip: the message and chunks that issued it, the call, hooks, approvals, its result, and the times between",
    )
    .argument('<log>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .argument('<call-id>', 'the call id (as in dsh log show: [call_…])')
    .option('--json', 'print the round trip(s) as JSON')
    .option('--full', 'do not truncate arguments and result previews')
    .addHelpText(
      'after',
      `
Call ids are unique within a step, not within a session: an id used in several steps prints each
round trip. An id the log does not have is a usage error (exit 2, CALL_NOT_FOUND) listing the
nearest ids it has.

Examples:
  dsh log call examples/fix-typo.jsonl call_01_grep
  dsh log call --json 3f2a call_00_d0sAHpJ9`,
    )
    .action(async (file: string, callId: string, opts: CallOptions) => {
      const { runCall } = await import('./call.js');
      setExit(await runCall(await resolveLogArg(file, io.env), callId, opts, io));
    });

  log
    .command('trace')
    .description('the provenance of one event: what it cites, what cites it, what it replaced and what replaced it')
    .argument('<log>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .argument('<seq>', 'the seq of the event (dsh log show lists them)', integer(0, 'a seq'))
    .option('--json', 'print the provenance as JSON')
    .addHelpText(
      'after',
      `
Citations are sourceEventSeqs (a message cites its chunks, a result its call, a compaction
summary what it replaced); replacements come from folding the surface, and are followed both
ways. A seq outside the log is a usage error (exit 2, SEQ_OUT_OF_RANGE) naming the range.

Examples:
  dsh log trace examples/fix-typo.jsonl 39
  dsh log trace --json 3f2a 4`,
    )
    .action(async (file: string, seq: number, opts: TraceOptions) => {
      const { runTrace } = await import('./trace.js');
      setExit(await runTrace(await resolveLogArg(file, io.env), seq, opts, io));
    });

  log
    .command('stats')
    .description(
      'what sessions did and cost: tokens, cost, times, end reasons, retries, errors, tools, alerts; one log, several, or the store',
    )
    .argument('[log...]', 'session log files (.jsonl) or stored session ids')
    .option('-a, --all', 'every stored session (of every workspace unless --cwd)')
    .option(
      '--since <date>',
      'stored sessions written since a date (2026-11-01, 2026-11-01T09:00Z) or an age (30m, 12h, 7d, 2w)',
      (v: string) => parseSince(v),
    )
    .option('-C, --cwd <dir>', 'stored sessions of this workspace')
    .option('--turns', 'one log: also a table of its turns')
    .option('--top <n>', 'tools listed (default 10 for several sessions, 20 for one)', integer(1, 'a count'))
    .option('--json', 'print the statistics as JSON')
    .addHelpText(
      'after',
      `
Costs come from the config's "prices" and DeepSeek's published prices (docs/data-plane.md); a
model with no price is listed as unpriced, never counted as free. A turn left open is live while
its writer holds the session's lock, dangling otherwise.

Examples:
  dsh log stats examples/fix-typo.jsonl
  dsh log stats --all --since 7d
  dsh log stats --cwd . --json | jq .cost`,
    )
    .action(async (files: string[], opts: StatsOptions) => {
      const { runStats } = await import('./stats.js');
      const paths = await Promise.all(files.map((f) => resolveLogArg(f, io.env)));
      setExit(await runStats(paths, opts, io));
    });

  log
    .command('export')
    .description(
      'send the session as OpenTelemetry GenAI traces to an OTLP/HTTP endpoint, or write it as a transcript (markdown, html) or a ' +
        'provider message array (openai, anthropic)',
    )
    .argument('<file>', 'session log file (.jsonl) or stored session id')
    .option('--otlp <url>', 'OTLP/HTTP traces endpoint, e.g. http://localhost:4318/v1/traces', httpUrl)
    .option(
      '--format <format>',
      'markdown or html: a transcript to share; openai or anthropic: the request body with the model-visible history',
      oneOf('markdown', 'html', 'openai', 'anthropic'),
    )
    .option('-o, --out <file>', 'with --format: write here (whole or not at all) instead of standard output')
    .option(
      '--at <seq>',
      'with --format openai|anthropic: the history after the event with this seq (default: the end)',
      integer(0, 'a seq'),
    )
    .option('-H, --header <name=value>', 'an HTTP header for the endpoint (repeatable), e.g. authorization=Bearer …', namePairs)
    .option('--content <mode>', 'none (default) or full: also send prompts, completions and tool data, size-capped', oneOf('none', 'full'))
    .option('--service-name <name>', 'the service.name resource attribute (default dsh)')
    .option('--resource-attribute <name=value>', 'another resource attribute (repeatable), e.g. deployment.environment=ci', namePairs)
    .option(
      '--traces <per>',
      'turn (default): one trace per turn; session: one trace for the session, a session span over the turns',
      oneOf('turn', 'session'),
    )
    .option('--json', 'print the export summary as JSON')
    .addHelpText(
      'after',
      `
Built from the log alone: re-exporting a log sends the same trace and span ids, so a receiver can
deduplicate. Message content stays out unless --content full. See docs/observability.md.

Examples:
  dsh log export --otlp http://localhost:4318/v1/traces examples/fix-typo.jsonl
  dsh log export --format markdown -o session.md 3f2a
  dsh log export --format openai --at 40 examples/fix-typo.jsonl
  dsh log export --otlp https://cloud.langfuse.com/api/public/otel/v1/traces -H "authorization=Basic …" 3f2a`,
    )
    .action(async (file: string, opts: ExportOptions) => {
      const { runExport } = await import('./export.js');
      setExit(await runExport(file, opts, io));
    });

  log
    .command('convert')
    .description('write a dsh log of any format this build reads (0-4) as a format 0 log')
    .argument('<file>', 'session log file (.jsonl) or stored session id; - reads standard input')
    .requiredOption('--to <version>', 'the format to write: 0')
    .option('-o, --out <file>', 'write the log here (default: standard output)')
    .addHelpText(
      'after',
      `
dsh's newer formats (1-4: streams inside assistant/message, system/message, V4 tool results and
message sources) are read as format 0 in memory by every log command; this writes that reading.
Event types format 0 has no type for are kept as ignorable events, and reported.

Examples:
  dsh log convert --to 0 session.v4.jsonl -o session.jsonl`,
    )
    .action(async (file: string, opts: ConvertOptions) => {
      const { runConvert } = await import('./convert.js');
      setExit(await runConvert(file, opts, io));
    });

  log
    .command('import')
    .description("write another agent's log as a dsh log, reporting per field what has no dsh event")
    .argument(
      '<file>',
      "another agent's log (Claude Code, Codex, pi, OpenHands, SWE-agent); FILE#key for one of its sessions; - reads standard input",
    )
    .option(
      '-o, --out <file>',
      'write the dsh log here (other sessions of the file beside it, as OUT.<key>.jsonl); default: standard output',
    )
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

/** A repeatable NAME=VALUE option, collected in order. */
function namePairs(v: string, prev: string[] = []): string[] {
  if (v.indexOf('=') <= 0) throw new InvalidArgumentError('expected NAME=VALUE');
  return [...prev, v];
}

/** An option taking one of a few words. */
function oneOf<T extends string>(...words: T[]): (v: string) => T {
  return (v) => {
    if (!(words as string[]).includes(v)) throw new InvalidArgumentError(`expected ${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);
    return v as T;
  };
}
