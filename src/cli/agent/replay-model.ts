/**
 * `--replay-model <log>`: the model's replies come from a recorded session log instead of a
 * provider. The log's recorded streams (each attempt's `assistant/chunk`s) are served in order
 * by the replay adapter, while everything else runs for real: tools, permissions, the store.
 * No key and no network are needed, so a client of `dsh sdk`, `dsh acp` or `dsh run` can be
 * tested against a fixed conversation, and the conformance runners replay dsh's own scenarios.
 *
 * The model defaults to the one the recording's first request header names, on a route only the
 * replay serves (dsh's `deepseek-official` is such a route here); `--model` may name another.
 */
import { readFileSync } from 'node:fs';
import { ReplayAdapter } from '../../llm/replay-adapter.js';
import type { LlmConfig } from '../../llm/config.js';
import type { ModelChoice } from '../../llm/model-choice.js';
import { chooseModel } from '../../llm/select.js';
import { CliError } from '../errors.js';
import { oneLine } from '../text.js';

export interface ReplayModel {
  choice: ModelChoice;
  adapter: ReplayAdapter;
}

/** The recorded log at `file` as the model, or a `REPLAY_LOG_INVALID` error naming the file. */
export function replayModel(
  file: string,
  spec: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  config: LlmConfig,
): ReplayModel {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('REPLAY_LOG_INVALID', `--replay-model ${oneLine(file)}: cannot read it (${oneLine((e as Error).message)})`);
  }
  let adapter: ReplayAdapter;
  try {
    adapter = new ReplayAdapter(text);
  } catch (e) {
    throw new CliError(
      'REPLAY_LOG_INVALID',
      `--replay-model ${oneLine(file)}: not a session log dsh reads (${oneLine((e as Error).message)})`,
    );
  }
  if (adapter.recording.attempts.length === 0)
    throw new CliError('REPLAY_LOG_INVALID', `--replay-model ${oneLine(file)}: the log records no model call to serve`);
  const first = adapter.recording.headers[0]?.header.config;
  const recorded = first ? `${first.provider}:${first.model}` : undefined;
  const chosen = spec ?? recorded;
  if (chosen === undefined)
    throw new CliError(
      'REPLAY_LOG_INVALID',
      `--replay-model ${oneLine(file)}: the log has no request header naming its model; give --model`,
    );
  const choice = chooseModel({ spec: chosen, env, config, adapters: [adapter], customRoutes: true });
  if (!adapter.providers.includes(choice.config.provider))
    throw new CliError(
      'USAGE',
      `--model ${oneLine(chosen)}: the recording serves ${adapter.providers.map(oneLine).join(', ')}, ` +
        `not ${oneLine(choice.config.provider)}`,
    );
  return { choice, adapter };
}
