/**
 * `dsh sdk`: the dsh SDK protocol over standard input and output (src/sdk has the protocol and
 * the server). This module is the host: it checks the workspace and the model at `initialize`,
 * and opens each session a prompt names as an ordinary stored session (created under that id,
 * or reopened when the store has it), with the coding agent on it exactly as `dsh run` builds
 * it: `persist()` first, so `dsh view`, `dsh log` and `--resume` work on every SDK session.
 *
 * Standard output carries only protocol lines; warnings go to standard error. The server ends on
 * `shutdown`, at the end of its input, or on SIGINT/SIGTERM, closing every session's log first.
 */
import { isAbsolute } from 'node:path';
import { SdkError, type InitializeParams } from '../sdk/protocol.js';
import { SdkServer, type SdkHost, type SdkSession } from '../sdk/server.js';
import { readLines } from '../sdk/lines.js';
import type { SessionEvent } from '../session/events.js';
import type { Store } from '../store/index.js';
import { CodedError } from '../model/coded-error.js';
import { CliError, EXIT_OK, EXIT_SIGINT, EXIT_SIGTERM } from './errors.js';
import type { Io } from './output.js';
import { agentSetup, agentWarnings, buildAgent, closeSession, type AgentSession } from './agent/start.js';
import { checkFlags, type ModelFlags } from './agent/flags.js';
import { checkSessionsRoot, indexPath } from './home.js';
import { storeFor } from './store.js';
import { workspaceDir } from './workspace.js';
import { packageVersion } from './version.js';
import { oneLine, safeJson } from './text.js';

export type SdkOptions = ModelFlags;

/** dsh's name for the official DeepSeek route; here it is `deepseek`. */
const DSH_OFFICIAL = 'deepseek-official';

type Setup = Awaited<ReturnType<typeof agentSetup>> & { cwd: string };

function modelSpec(p: InitializeParams, flags: SdkOptions): string {
  if (flags.model !== undefined) return flags.model;
  const provider = p.provider === DSH_OFFICIAL && flags.replayModel === undefined ? 'deepseek' : p.provider;
  return `${provider}:${p.model}`;
}

class CliSdkHost implements SdkHost {
  private setup: Setup | undefined;
  private store: Store | undefined;

  constructor(
    private readonly flags: SdkOptions,
    private readonly io: Io,
  ) {}

  async initialize(p: InitializeParams): Promise<Record<string, unknown>> {
    if (!isAbsolute(p.cwd)) throw new SdkError('INVALID_PARAMS', 'cwd must be an absolute path', { path: '$.params.cwd' });
    let cwd: string;
    try {
      cwd = workspaceDir(p.cwd);
    } catch (e) {
      throw new SdkError('INVALID_PARAMS', `cwd: ${(e as Error).message}`, { path: '$.params.cwd' });
    }
    const flags: ModelFlags = { ...this.flags, model: modelSpec(p, this.flags) };
    if (p.maxTokens !== undefined) flags.maxTokens = p.maxTokens;
    let setup: Setup;
    try {
      setup = { ...(await agentSetup(cwd, flags, this.io)), cwd };
      const store = await storeFor(this.io.env);
      if (store.kind === 'jsonl') checkSessionsRoot(store.location, this.io.env, { create: true });
      this.store = store;
    } catch (e) {
      if (e instanceof CodedError) throw new SdkError('INITIALIZE_FAILED', e.message, { cause: e.code });
      throw e;
    }
    setup.coding = { ...setup.coding, title: true };
    this.setup = setup;
    for (const w of setup.configWarnings) this.warn(`${oneLine(w.file)}: ${oneLine(w.path)}: ${oneLine(w.message)}`);
    if (setup.environWarning !== undefined) this.warn(setup.environWarning);
    return { cwd, model: `${setup.ref.provider}:${setup.ref.model}`, store: store_(this.store) };
  }

  async open(id: string, onEvent: (event: SessionEvent) => void): Promise<SdkSession> {
    const setup = this.setup!;
    const store = this.store!;
    const { sessions } = await store.list();
    const existing = sessions.find((s) => s.id === id);
    if (existing && existing.header.cwd !== setup.cwd)
      throw new SdkError('INVALID_PARAMS', `session ${id} belongs to the workspace ${existing.header.cwd}, not ${setup.cwd}`, {
        path: '$.params.sessionId',
      });
    const stored = existing ? await store.open(id) : await store.create({ cwd: setup.cwd, id });
    const detach = stored.session.subscribe(onEvent);
    const s: Pick<AgentSession, 'coding' | 'stored' | 'searchIndex'> = {
      coding: setup.coding,
      stored,
      ...(store.kind === 'jsonl' ? { searchIndex: indexPath(this.io.env) } : {}),
    };
    let coding: Awaited<ReturnType<typeof buildAgent>>;
    try {
      coding = await buildAgent(s, stored.session);
    } catch (e) {
      detach();
      await stored.close();
      throw e;
    }
    for (const w of stored.warnings) this.warn(`${oneLine(stored.location)}: ${oneLine(w.message)}`);
    for (const w of agentWarnings(coding)) this.warn(w);
    const io = this.io;
    return {
      agent: coding.agent,
      async close() {
        try {
          await closeSession(coding, stored, io);
        } finally {
          detach();
        }
      },
    };
  }

  private warn(text: string): void {
    this.io.err.line(`dsh sdk: warning: ${text}`);
    this.io.err.flush();
  }
}

function store_(store: Store | undefined): string | null {
  return store ? store.location : null;
}

export async function runSdk(flags: SdkOptions, io: Io): Promise<number> {
  checkFlags({ ...flags, persist: true });
  const stdin = io.stdin;
  if (!stdin) throw new CliError('USAGE', 'dsh sdk reads JSON-RPC requests on standard input, and there is none');
  let done = false;
  let signal: 'SIGINT' | 'SIGTERM' | undefined;
  const server = new SdkServer(new CliSdkHost(flags, io), {
    send: (m) => {
      io.out.line(safeJson(m));
      io.out.flush();
    },
    serverInfo: { name: 'dsh', version: packageVersion() },
    onShutdown: () => {
      done = true;
    },
  });
  const removers: (() => void)[] = [];
  if (io.proc) {
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      removers.push(
        io.proc.onSignal(sig, () => {
          signal ??= sig;
          // Ends the read loop below; the sessions are closed on the way out.
          (stdin as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        }),
      );
  }
  try {
    for await (const line of readLines(stdin as AsyncIterable<Buffer | string>)) {
      if (typeof line === 'string') await server.accept(line);
      else await server.refuseOversized(line.oversized);
      if (done || signal) break;
    }
  } catch (e) {
    // A destroyed input (a signal) ends the loop; anything else is a real failure.
    if (signal === undefined) throw e;
  } finally {
    await server.closeAll();
    for (const r of removers) r();
  }
  if (signal === 'SIGINT') return EXIT_SIGINT;
  if (signal === 'SIGTERM') return EXIT_SIGTERM;
  return EXIT_OK;
}
