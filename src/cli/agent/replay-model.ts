/**
 * `--replay-model LOG [--replay-override FILE]`: the model's replies come from a recorded session
 * log instead of a provider, call by call (`ScriptAdapter`: call N of this run gets the log's call
 * N, compaction summaries the recorded model wrote included), optionally patched by a sidecar in
 * dsh's `replay.override.json` format (replace the script, or patch call N; entries may also fail
 * or hang until cancelled). Everything else runs for real: tools, permissions, hooks, the store.
 * No key and no network are needed, so a client of `dsh sdk`, `dsh acp` or `dsh run` can be tested
 * against a fixed conversation, and the conformance runners replay dsh's own scenarios. It is the
 * only such mechanism on the command line (`dsh replay` is different: it re-runs a stored session
 * and reports where the live requests diverge from the recorded ones).
 *
 * The model defaults to the one the recording's first request header names, on a route only the
 * replay serves (dsh's `deepseek-official` is such a route here); `--model` may name another; a
 * log without a header (a script given wholly by the override) takes the default model.
 */
import { readFileSync } from 'node:fs';
import type { LlmConfig } from '../../llm/config.js';
import type { ModelChoice } from '../../llm/model-choice.js';
import { parseScriptOverride, ScriptAdapter, ScriptOverrideError, type ScriptOverride } from '../../llm/script-adapter.js';
import { chooseModel, type ChooseModelOptions } from '../../llm/select.js';
import { loadJsonl } from '../../session/codec/load.js';
import type { SessionEvent } from '../../session/events.js';
import { CliError } from '../errors.js';
import { oneLine } from '../text.js';
import type { ModelFlags } from './flags.js';

/** The recorded log and its override, read and checked once (a bad file fails before anything starts). */
export interface ReplayScript {
  file: string;
  events: readonly SessionEvent[];
  override?: ScriptOverride;
  overrideFile?: string;
  /** `provider:model` of the recording's first request header. */
  recordedModel?: string;
}

export interface ReplayModel {
  choice: ModelChoice;
  adapter: ScriptAdapter;
}

function readOverride(file: string): ScriptOverride {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('REPLAY_OVERRIDE_INVALID', `--replay-override ${oneLine(file)}: cannot read it (${oneLine((e as Error).message)})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new CliError('REPLAY_OVERRIDE_INVALID', `--replay-override ${oneLine(file)}: not JSON (${oneLine((e as Error).message)})`);
  }
  try {
    return parseScriptOverride(doc, file);
  } catch (e) {
    if (e instanceof ScriptOverrideError)
      throw new CliError('REPLAY_OVERRIDE_INVALID', `--replay-override ${oneLine(e.message)}`, { cause: e });
    throw e;
  }
}

/**
 * The flags' recording, or undefined without `--replay-model`. `REPLAY_LOG_INVALID` /
 * `REPLAY_OVERRIDE_INVALID` name the file (and, for the override, the JSON path).
 */
export function loadReplay(flags: Pick<ModelFlags, 'replayModel' | 'replayOverride'>): ReplayScript | undefined {
  if (flags.replayModel === undefined) {
    if (flags.replayOverride !== undefined) throw new CliError('USAGE', '--replay-override patches a recording: give --replay-model too');
    return undefined;
  }
  const file = flags.replayModel;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('REPLAY_LOG_INVALID', `--replay-model ${oneLine(file)}: cannot read it (${oneLine((e as Error).message)})`);
  }
  let events: readonly SessionEvent[];
  try {
    events = loadJsonl(text, { placeholders: 'warn' }).session.events;
  } catch (e) {
    throw new CliError(
      'REPLAY_LOG_INVALID',
      `--replay-model ${oneLine(file)}: not a session log dsh reads (${oneLine((e as Error).message)})`,
    );
  }
  const script: ReplayScript = { file, events };
  if (flags.replayOverride !== undefined) {
    script.override = readOverride(flags.replayOverride);
    script.overrideFile = flags.replayOverride;
  }
  const header = events.find((e) => e.type === 'request/header');
  if (header?.type === 'request/header') script.recordedModel = `${header.data.header.config.provider}:${header.data.header.config.model}`;
  // Built once here so a patch past the recorded calls fails now. A recording with no call at all
  // is served too (a session that never reaches the model: a handshake, a blocked prompt); a
  // call past the script's end fails the turn with REPLAY_EXHAUSTED.
  try {
    adapterFor(script, process.cwd());
  } catch (e) {
    if (e instanceof ScriptOverrideError)
      throw new CliError('REPLAY_OVERRIDE_INVALID', `--replay-override ${oneLine(e.message)}`, { cause: e });
    throw e;
  }
  return script;
}

function adapterFor(script: ReplayScript, cwd: string): ScriptAdapter {
  return new ScriptAdapter(script.events, {
    cwd,
    ...(script.override ? { override: script.override } : {}),
    ...(script.overrideFile !== undefined ? { overrideFile: script.overrideFile } : {}),
  });
}

/**
 * A fresh adapter over the recording (its calls counted from the first) and the model it serves,
 * for a workspace (`cwd`: where a hang entry's `readyFile` is made).
 */
export function replayModel(
  script: ReplayScript,
  opts: {
    spec: string | undefined;
    cwd: string;
    env: Readonly<Record<string, string | undefined>>;
    config: LlmConfig;
  } & Pick<ChooseModelOptions, 'resolveAttachment'>,
): ReplayModel {
  const adapter = adapterFor(script, opts.cwd);
  const chosen = opts.spec ?? script.recordedModel;
  const choice = chooseModel({
    spec: chosen,
    env: opts.env,
    config: opts.config,
    adapters: [adapter],
    customRoutes: true,
    ...(opts.resolveAttachment ? { resolveAttachment: opts.resolveAttachment } : {}),
  });
  if (!adapter.providers.includes(choice.config.provider))
    throw new CliError(
      'USAGE',
      `--model ${oneLine(chosen ?? `${choice.config.provider}:${choice.config.model}`)}: the recording serves ` +
        `${adapter.providers.map(oneLine).join(', ')}, not ${oneLine(choice.config.provider)}`,
    );
  return { choice, adapter };
}
