/**
 * `dsh acp`: serve the Agent Client Protocol on standard input and output (src/acp), for editors
 * that start dsh as their agent (docs/acp.md). This module is the surface's host: the store the
 * sessions live in, and a coding agent per session built as `dsh run` builds one (config, model
 * choice and key handling per workspace, the command line's flags), so an ACP session is an
 * ordinary stored session.
 *
 * `--replay LOG` serves the model from a recorded session log instead of a provider, call by call
 * (`ScriptAdapter`; `--replay-override FILE` patches it in dsh's `replay.override.json` format):
 * the conformance runner drives `dsh acp` this way, and it shows an editor integration with no key.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { AttachmentStore } from '../acp/attachments.js';
import { AcpError } from '../acp/errors.js';
import { serveAcp, type AcpHost } from '../acp/server.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { parseScriptOverride, ScriptAdapter } from '../llm/script-adapter.js';
import { loadJsonl } from '../session/codec/load.js';
import type { AgentFlags, ModelFlags } from './agent/flags.js';
import { agentSetup, buildAgent } from './agent/start.js';
import { CliError } from './errors.js';
import { indexPath } from './home.js';
import type { Io } from './output.js';
import { storeFor } from './store.js';
import { oneLine } from './text.js';
import { packageVersion } from './version.js';
import { workspaceDir } from './workspace.js';

export interface AcpOptions extends ModelFlags {
  replay?: string;
  replayOverride?: string;
  /** `--no-persist` is refused: an ACP session is a stored session. */
  persist?: boolean;
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError('FILE_UNREADABLE', `cannot read the ${what}: ${(e as Error).message}`, { file });
  }
}

/** The recording's script and the model it was recorded with. */
function replayAdapter(opts: AcpOptions): { adapter: LlmAdapter; model: string | undefined } {
  const loaded = loadJsonl(readText(opts.replay!, 'recorded log'), { placeholders: 'warn' });
  const events = loaded.session.events;
  let override;
  if (opts.replayOverride !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(readText(opts.replayOverride, 'replay override'));
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError('USAGE', `the replay override is not JSON: ${(e as Error).message}`, { file: opts.replayOverride });
    }
    override = parseScriptOverride(doc, opts.replayOverride);
  }
  const header = events.find((e) => e.type === 'request/header');
  const model = header?.type === 'request/header' ? `${header.data.header.config.provider}:${header.data.header.config.model}` : undefined;
  return { adapter: new ScriptAdapter(events, override ? { override } : {}), model };
}

export async function runAcp(opts: AcpOptions, io: Io): Promise<number> {
  if (opts.persist === false) throw new CliError('USAGE', '--no-persist does not apply: every ACP session is a stored session');
  if (opts.replayOverride !== undefined && opts.replay === undefined) throw new CliError('USAGE', '--replay-override needs --replay');
  const flags: AgentFlags = { ...opts, persist: true };
  let adapters: LlmAdapter[] | undefined;
  if (opts.replay !== undefined) {
    const r = replayAdapter(opts);
    adapters = [r.adapter];
    if (flags.model === undefined && r.model !== undefined) flags.model = r.model;
  }
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
      // A replayed recording may name a route this build does not know (dsh's own): its adapter serves it.
      s = agentSetup(cwd, flags, io, { resolveAttachment: attachments.resolve, ...(adapters ? { adapters, customRoutes: true } : {}) });
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
