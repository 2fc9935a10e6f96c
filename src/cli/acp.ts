/**
 * `dsh acp`: serve the Agent Client Protocol on standard input and output (src/acp), for editors
 * that start dsh as their agent (docs/acp.md). This module is the surface's host: the store the
 * sessions live in, and a coding agent per session built as `dsh run` builds one (config, model
 * choice and key handling per workspace, the command line's flags), so an ACP session is an
 * ordinary stored session.
 *
 * `--replay-model LOG [--replay-override FILE]` (replay-model.ts, as on `dsh run`) serves the model
 * from a recorded session log instead of a provider: the conformance runner and the tests drive
 * `dsh acp` this way, and it shows an editor integration with no key. The files are read once, at
 * start, so a bad one fails before the first message.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { AttachmentStore } from '../acp/attachments.js';
import { AcpError } from '../acp/errors.js';
import { serveAcp, type AcpHost } from '../acp/server.js';
import type { AgentFlags, ModelFlags } from './agent/flags.js';
import { loadReplay } from './agent/replay-model.js';
import { agentSetup, buildAgent } from './agent/start.js';
import { llmSection } from '../config/config.js';
import { configuredSecrets } from '../coding/secrets.js';
import { chooseModel, configuredModels } from '../llm/select.js';
import { CliError } from './errors.js';
import { indexPath } from './home.js';
import type { Io } from './output.js';
import { storeFor } from './store.js';
import { oneLine } from './text.js';
import { packageVersion } from './version.js';
import { workspaceDir } from './workspace.js';

export interface AcpOptions extends ModelFlags {
  /** `--no-persist` is refused: an ACP session is a stored session. */
  persist?: boolean;
}

export async function runAcp(opts: AcpOptions, io: Io): Promise<number> {
  if (opts.persist === false) throw new CliError('USAGE', '--no-persist does not apply: every ACP session is a stored session');
  const flags: AgentFlags = { ...opts, persist: true };
  const replay = loadReplay(flags);
  const store = await storeFor(io.env, { create: true });
  // Beside the sessions and the search index: $DSH_HOME/attachments.
  const attachments = new AttachmentStore(join(dirname(dirname(indexPath(io.env))), 'attachments'));
  const searchIndex = store.kind === 'jsonl' ? indexPath(io.env) : undefined;
  const warn = (line: string): void => void process.stderr.write(`dsh acp: ${oneLine(line)}\n`);
  // One setup per workspace: its config, its model choice (the key checked once).
  const setups = new Map<string, ReturnType<typeof agentSetup>>();
  const setupFor = (cwd: string): ReturnType<typeof agentSetup> => {
    let s = setups.get(cwd);
    if (!s) {
      s = agentSetup(cwd, flags, io, { resolveAttachment: attachments.resolve, ...(replay ? { replay } : {}) });
      s.then(
        (x) => {
          for (const w of x.configWarnings) warn(`${w.file}: ${w.path}: ${w.message}`);
          if (x.environWarning !== undefined) warn(x.environWarning);
        },
        () => setups.delete(cwd),
      );
      setups.set(cwd, s);
    }
    return s;
  };

  const host: AcpHost = {
    store,
    version: packageVersion(),
    attachments,
    warn,
    workspace(cwd) {
      if (!isAbsolute(cwd)) throw new AcpError('WORKSPACE_INVALID', `cwd must be an absolute path, not ${JSON.stringify(cwd)}`, '$.cwd');
      try {
        return workspaceDir(cwd);
      } catch (e) {
        throw new AcpError('WORKSPACE_INVALID', `cwd ${JSON.stringify(cwd)}: ${(e as Error).message}`, '$.cwd');
      }
    },
    async models(cwd) {
      const setup = await setupFor(cwd);
      const configured = configuredModels(llmSection(setup.config)).map((r) => `${r.provider}:${r.model}`);
      return { started: setup.ref, configured };
    },
    async secrets(cwd) {
      return configuredSecrets((await setupFor(cwd)).config, io.env);
    },
    async pickModel(cwd, ref) {
      const setup = await setupFor(cwd);
      const choice = chooseModel({ spec: ref, env: io.env, config: llmSection(setup.config), adapters: setup.coding.adapters ?? [] });
      return { ref: { provider: choice.config.provider, model: choice.config.model }, adapter: () => choice.adapter() };
    },
    async codingAgent(stored, extra) {
      const cwd = stored.session.header.cwd ?? process.cwd();
      const setup = await setupFor(cwd);
      const coding = extra.policy ? { ...setup.coding, sandbox: extra.policy.sandbox, approval: extra.policy.approval } : setup.coding;
      return buildAgent({ coding, stored, ...(searchIndex !== undefined ? { searchIndex } : {}) }, stored.session, {
        approve: extra.approve,
        plugins: extra.plugins,
      });
    },
  };
  await serveAcp(process.stdin, process.stdout, host);
  return 0;
}
