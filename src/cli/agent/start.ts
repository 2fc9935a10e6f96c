/**
 * Starting an agent session for `dsh run` and `dsh chat`, in an order that fails early and
 * leaves nothing behind: find the session to continue (headers only, no lock), read the config,
 * select the model and check its key, and only then create or open the log. The coding agent is
 * built on that log with `persist()`, so every event it commits reaches the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { createCodingAgent, type CodingAgent, type CodingAgentOptions } from '../../coding/agent.js';
import { loadConfig, llmSection, type ConfigWarning, type DshConfig } from '../../config/config.js';
import { chooseModel, type ChooseModelOptions, type ModelRef } from '../../llm/select.js';
import type { LlmAdapter } from '../../llm/adapter.js';
import type { Plugin } from '../../agent/context.js';
import { Session, type LogWarning } from '../../session/index.js';
import { persist, type OpenSession, type Store, type StoreSessionInfo } from '../../store/index.js';
import type { ApprovalHandler } from '../../tools/pipeline.js';
import { CliError } from '../errors.js';
import type { Io } from '../output.js';
import { findSession } from '../session-ref.js';
import { storeFor } from '../store.js';
import { checkSessionsRoot } from '../home.js';
import { oneLine } from '../text.js';
import { checkFlags, policyFlags, type AgentFlags, type ModelFlags } from './flags.js';
import { configuredSecrets } from '../../coding/secrets.js';
import { keyVariables } from '../../llm/secrets.js';
import { hiddenVariables } from '../../tools/builtin/bash.js';
import { scrubEnviron } from '../environ.js';

export { workspaceDir } from '../workspace.js';
import { workspaceDir } from '../workspace.js';
import { indexPath } from '../home.js';
import { isToolSet, TOOL_SETS } from '../../tools/coding-tools.js';
import { finishIndex, indexAsWritten } from './search-index.js';
import { loadReplay, replayModel, type ReplayScript } from './replay-model.js';

function holdsAny(file: string, values: readonly string[]): boolean {
  try {
    const text = readFileSync(file, 'utf8');
    return values.some((v) => text.includes(v));
  } catch {
    return false;
  }
}

/** This workspace's session with the latest write. */
async function latestIn(store: Store, cwd: string): Promise<StoreSessionInfo> {
  const { sessions } = await store.list();
  const here = sessions.filter((s) => s.header.cwd === cwd);
  if (here.length === 0)
    throw new CliError('SESSION_NOT_FOUND', `no stored session for ${cwd} under ${store.location}; start one without --continue`);
  return here.reduce((a, b) => (b.modifiedMs > a.modifiedMs ? b : a));
}

export interface AgentSession {
  cwd: string;
  config: DshConfig;
  configWarnings: ConfigWarning[];
  ref: ModelRef;
  adapter: LlmAdapter;
  session: Session;
  store: Store | undefined;
  stored: OpenSession | undefined;
  /** Where the log is (a file, or a database location); undefined with --no-persist. */
  path: string | undefined;
  resumed: boolean;
  /** What opening a stored log found and repaired (torn tail, turn left open). */
  openWarnings: readonly LogWarning[];
  /** Options for `createCodingAgent` besides the session, the approval callback and plugins. */
  coding: CodingAgentOptions;
  /** Said before the work starts when dsh could not hide its keys in its own environment. */
  environWarning?: string;
  /** The search index the log is indexed into as it is written (JSONL store only). */
  searchIndex?: string;
}

export async function startSession(flags: AgentFlags, io: Io): Promise<AgentSession> {
  checkFlags(flags);
  if (flags.resume === true)
    throw new CliError(
      'USAGE',
      '--resume without an id picks from a list, which only dsh chat on a terminal shows: give the id ' +
        '(dsh sessions lists them), or use --continue for the latest',
    );
  const store = flags.persist ? await storeFor(io.env) : undefined;
  let resume: StoreSessionInfo | undefined;
  let cwd: string;
  if (store && flags.resume !== undefined) {
    resume = await findSession(store, flags.resume);
    // A resumed session keeps its workspace unless one is named.
    cwd = workspaceDir(flags.cwd ?? resume.header.cwd);
  } else {
    cwd = workspaceDir(flags.cwd);
    if (store && flags.continue) resume = await latestIn(store, cwd);
  }

  const setup = await agentSetup(cwd, flags, io);

  let stored: OpenSession | undefined;
  let session: Session;
  if (!store) session = Session.create({ header: { cwd } });
  else {
    if (store.kind === 'jsonl') checkSessionsRoot(store.location, io.env, { create: true });
    stored = resume ? await store.open(resume.id) : await store.create({ cwd });
    session = stored.session;
  }

  return {
    cwd,
    ...setup,
    session,
    store,
    stored,
    path: stored?.location,
    resumed: resume !== undefined,
    openWarnings: stored?.warnings ?? [],
    ...(store?.kind === 'jsonl' ? { searchIndex: indexPath(io.env) } : {}),
  };
}

/**
 * The config, model and coding-agent options for a workspace, from the flags: what `dsh run`
 * and `dsh chat` start with, and what `dsh worker` runs each session with. A missing key fails
 * here, before any log is touched.
 */
export async function agentSetup(
  cwd: string,
  flags: ModelFlags,
  io: Io,
  extras: Pick<ChooseModelOptions, 'adapters' | 'resolveAttachment' | 'customRoutes'> & {
    /** The flags' recording, already read (`dsh acp` reads it once for all its workspaces). */
    replay?: ReplayScript;
  } = {},
): Promise<Pick<AgentSession, 'config' | 'configWarnings' | 'ref' | 'adapter' | 'coding' | 'environWarning'>> {
  const loaded = await loadConfig({ cwd, env: io.env, ...(flags.config !== undefined ? { file: flags.config } : {}) });
  const llm = llmSection(loaded.config);
  // Chosen once, against the CLI's environment (not whatever the process had), and passed down
  // to the coding preset and the agent as it is; the adapter is made now, so a missing key fails
  // here, before any log exists.
  const { replay: given, ...choose } = extras;
  const replay = given ?? loadReplay(flags);
  const choice = replay
    ? replayModel(replay, { spec: flags.model, cwd, env: io.env, config: llm, resolveAttachment: choose.resolveAttachment }).choice
    : chooseModel({ spec: flags.model, env: io.env, config: llm, ...choose });
  const ref: ModelRef = { provider: choice.config.provider, model: choice.config.model };
  const adapter = choice.adapter()!;
  // The keys are read: from here on no secret is printed, and dsh's own environment block (which
  // any process of the same user reads from /proc/<pid>/environ) no longer holds them.
  const secrets = configuredSecrets(loaded.config, io.env);
  io.out.redact(secrets);
  io.err.redact(secrets);
  // If that fails (a read-only /proc, a kernel that refuses /proc/self/mem writes), fail safe:
  // commands run only where they cannot see dsh's process, and the user is told.
  let exposedKeys: string | undefined;
  let environWarning: string | undefined;
  if (io.env === process.env) {
    const scrub = scrubEnviron(hiddenVariables(io.env, keyVariables(llm), secrets));
    if (scrub.left.length > 0) {
      exposedKeys = `${scrub.left.join(', ')} could not be overwritten: ${scrub.unavailable ?? 'unknown reason'}`;
      environWarning =
        `dsh's environment still shows ${scrub.left.join(', ')} to processes of this user (` +
        `${oneLine(scrub.unavailable ?? 'the overwrite did not hold')}): commands run only inside bubblewrap, and are refused where ` +
        'it cannot run';
    } else if (scrub.unavailable !== undefined) {
      environWarning =
        `dsh cannot hide its keys in its own environment here (${oneLine(scrub.unavailable)}): processes of this user may read them ` +
        `from dsh's process`;
    }
  }
  const coding: CodingAgentOptions = {
    cwd,
    model: choice,
    config: loaded.config,
    adapters: [adapter],
    ...policyFlags(flags),
  };
  // A config file holding a literal key is dsh's, not the tools': none of them may read it.
  const literal = configuredSecrets(loaded.config, {});
  const hidePaths = loaded.sources.map((s) => s.file).filter((f) => literal.length > 0 && holdsAny(f, literal));
  if (hidePaths.length > 0) coding.hidePaths = hidePaths;
  if (exposedKeys !== undefined) coding.exposedKeys = exposedKeys;
  if (flags.reasoningEffort !== undefined) coding.reasoningEffort = flags.reasoningEffort;
  if (flags.maxTokens !== undefined) coding.maxTokens = flags.maxTokens;
  if (flags.allow.length) coding.allow = flags.allow;
  if (flags.ask.length) coding.ask = flags.ask;
  if (flags.deny.length) coding.deny = flags.deny;
  if (flags.compact === false) coding.compaction = { auto: false };
  if (flags.agentPreset !== undefined) coding.agentPreset = flags.agentPreset;
  // dsh's variable: a default a stored session's own recorded preset outranks (as in dsh).
  const fromEnv = io.env.DSH_AGENT_PRESET?.trim();
  if (fromEnv) {
    if (!isToolSet(fromEnv))
      throw new CliError('USAGE', `DSH_AGENT_PRESET=${JSON.stringify(fromEnv)} names no agent preset here: use ${TOOL_SETS.join(' or ')}`);
    coding.defaultAgentPreset = fromEnv;
  }
  return {
    config: loaded.config,
    configWarnings: loaded.warnings,
    ref,
    adapter,
    coding,
    ...(environWarning !== undefined ? { environWarning } : {}),
  };
}

/** The coding agent on the session's log; `persist()` first, so checkpoints precede everything. */
export async function buildAgent(
  s: Pick<AgentSession, 'coding' | 'stored' | 'searchIndex'>,
  session: Session,
  extra: { approve?: ApprovalHandler; plugins?: Plugin[] } = {},
): Promise<CodingAgent> {
  const plugins: Plugin[] = [];
  if (s.stored) plugins.push(persist(s.stored));
  if (s.stored && s.searchIndex !== undefined) plugins.push(indexAsWritten(s.stored, s.searchIndex));
  plugins.push(...(extra.plugins ?? []));
  let coding = s.coding;
  // Hooks get the log's file as `transcript_path` (a JSONL store's; a database row is no file).
  if (s.stored && coding.hooks !== false && isAbsolute(s.stored.location) && existsSync(s.stored.location))
    coding = { ...coding, hooks: { ...(coding.hooks ?? {}), transcriptPath: s.stored.location } };
  return createCodingAgent({ ...coding, session, plugins, ...(extra.approve ? { approve: extra.approve } : {}) });
}

/** Warnings worth a line before the work starts: config, sandbox, MCP, log recovery. */
export function startWarnings(s: AgentSession, coding: CodingAgent): string[] {
  const out: string[] = [];
  for (const w of s.configWarnings) out.push(`${oneLine(w.file)}: ${oneLine(w.path)}: ${oneLine(w.message)}`);
  for (const w of s.openWarnings) out.push(`${oneLine(s.path ?? 'session log')}: ${oneLine(w.message)}`);
  if (s.environWarning !== undefined) out.push(s.environWarning);
  out.push(...agentWarnings(coding));
  return out;
}

export function agentWarnings(coding: CodingAgent): string[] {
  const out: string[] = [];
  const sb = coding.sandbox;
  if (sb.enforcement === 'partial') {
    out.push(
      `the ${sb.mode} sandbox is only partially enforced on this machine (${oneLine(sb.reason ?? 'no reason given')}): bash runs ` +
        'without a file sandbox, so under --approval ask each command needs approval',
    );
  }
  for (const [name, reason] of coding.mcpFailures) out.push(`MCP server ${oneLine(name)} did not start: ${oneLine(reason)}`);
  for (const w of coding.hookWarnings) out.push(oneLine(w));
  return out;
}

/** Dispose the agent (and MCP servers), then flush and close the log, then index what it holds. */
export async function closeSession(coding: CodingAgent | undefined, stored: OpenSession | undefined, io: Io): Promise<void> {
  try {
    await coding?.close();
  } finally {
    if (stored) {
      const r = await stored.close();
      if (!r.ok) io.err.line(`dsh: the session log could not be closed cleanly: ${oneLine(r.error.message)} [${r.error.code}]`);
      const failed = await finishIndex(stored);
      if (failed)
        io.err.line(`dsh: the search index was not updated (${oneLine(failed.message)}); the next dsh sessions search reads the log`);
    }
  }
}
