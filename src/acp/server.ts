/**
 * `dsh acp`: an Agent Client Protocol agent on standard input and output, on the official SDK
 * (`@agentclientprotocol/sdk`; its `unstable` entry point for `session/fork`), protocol version 1.
 *
 * Every session is an ordinary stored session (`dsh log`, `dsh view`, `dsh run --resume` work on
 * it): `session/new` creates one, `session/load` reopens one and replays its history as updates,
 * `session/resume` reopens one without the replay, `session/fork` starts a new session seeded with
 * one's history, `session/list` lists them, `session/close` closes one. session.ts drives prompts
 * and cancellation, updates.ts says what the client is shown, permission.ts maps approvals.
 *
 * This layer sits on top: it reaches the agent only through its public API and the session event
 * stream, and gets its stored sessions and coding agents from its host (the CLI), which owns the
 * config, the model choice and the key handling. Standard output carries only protocol messages.
 * The server runs until the client closes the connection; then every running turn ends `aborted`
 * (cause `disposed`) and every log is closed.
 */
import { realpath } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import {
  agent as acpAgent,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type AgentConnection,
  type AgentContext,
  type ClientCapabilities,
  type InitializeResponse,
  type SessionInfo,
} from '@agentclientprotocol/sdk/unstable';
import type { Plugin } from '../agent/context.js';
import { ModelSwitch } from '../coding/model-switch.js';
import type { LlmAdapter } from '../llm/adapter.js';
import type { ModelRef } from '../llm/select.js';
import type { CodingAgent } from '../coding/agent.js';
import type { OpenSession, Store } from '../store/index.js';
import type { ApprovalHandler } from '../tools/pipeline.js';
import type { AttachmentStore } from './attachments.js';
import { clientFs } from './client-fs.js';
import { clientTerminal } from './client-terminal.js';
import { COMMANDS } from './commands.js';
import { AcpError, toRequestError } from './errors.js';
import type { Policy } from './modes.js';
import { permissionHandler } from './permission.js';
import { AcpSession, MODEL_OPTION } from './session.js';

export const AGENT_NAME = 'dsh';

/** What the surface needs from its host: stored sessions, and coding agents on them. */
export interface AcpHost {
  store: Store;
  version: string;
  attachments: AttachmentStore;
  /** The canonical workspace for a client's `cwd`; throws a coded error when it is not one. */
  workspace(cwd: string): string;
  /** A coding agent on an open stored session: the config, model and policy of its workspace. */
  codingAgent(
    stored: OpenSession,
    extra: { approve: ApprovalHandler; plugins: Plugin[]; policy: Policy | undefined },
  ): Promise<CodingAgent>;
  /** The models of a workspace: the one its sessions start with, and those its config names. */
  models(cwd: string): Promise<{ started: ModelRef; configured: string[] }>;
  /** `ref` checked for use (a known provider); throws a coded error when it cannot be. */
  pickModel(cwd: string, ref: string): Promise<{ ref: ModelRef; adapter: () => LlmAdapter | undefined }>;
  /** Every secret the workspace's config holds (`configuredSecrets`): an editor text holding one is refused. */
  secrets(cwd: string): Promise<readonly string[]>;
  /** A line for the operator (standard error): never on the protocol stream. */
  warn(line: string): void;
}

const LIST_PAGE = 100;

function noExtraDirectories(dirs: readonly string[] | undefined | null): void {
  if (dirs && dirs.length > 0)
    throw new AcpError(
      'UNSUPPORTED',
      'additional directories are not supported: the tools are confined to one workspace',
      '$.additionalDirectories',
    );
}

/**
 * The tools the client's capabilities change: its file system for the file tools' reads, writes
 * and edits of workspace files (client-fs.ts), its terminal for commands the sandbox policy
 * leaves unconfined (client-terminal.ts). Without them, the local tools run as they are.
 */
function clientTools(
  caps: ClientCapabilities,
  opts: {
    client: AgentContext;
    sessionId: string;
    root: string;
    secrets: readonly string[];
    distrusted: Set<string>;
    started: (callId: string, terminalId: string) => void;
  },
): Plugin[] {
  const out: Plugin[] = [];
  if (caps.fs?.readTextFile === true || caps.fs?.writeTextFile === true) out.push(clientFs({ ...opts, caps: caps.fs }));
  if (caps.terminal === true) out.push(clientTerminal(opts));
  return out;
}

/** Runs handler code with every failure turned into the JSON-RPC error the client gets. */
async function answer<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toRequestError(e);
  }
}

export async function serveAcp(input: Readable, output: Writable, host: AcpHost): Promise<void> {
  const sessions = new Map<string, AcpSession>();
  let caps: ClientCapabilities = {};
  let conn: AgentConnection | undefined;
  // Files whose editor text is not trusted again: the editor's buffers outlive a session, so a
  // new session (or a loaded one) on this connection must not ask for them either.
  const distrusted = new Set<string>();

  const find = (id: string): AcpSession => {
    const s = sessions.get(id);
    if (!s)
      throw new AcpError(
        'SESSION_NOT_OPEN',
        `no session ${JSON.stringify(id)} is open here: create, load or resume it first`,
        '$.sessionId',
      );
    return s;
  };

  const open = async (stored: OpenSession): Promise<AcpSession> => {
    const client = conn!.client;
    const sessionId = stored.session.id;
    // The client terminals calls ran in; `s` exists before any call runs.
    const terminals = new Map<string, string>();
    let s: AcpSession | undefined;
    const cwd = stored.session.header.cwd ?? process.cwd();
    const plugins = clientTools(caps, {
      client,
      sessionId,
      root: await realpath(cwd),
      secrets: await host.secrets(cwd),
      distrusted,
      started: (callId, terminalId) => {
        terminals.set(callId, terminalId);
        s?.send({ sessionUpdate: 'tool_call_update', toolCallId: callId, content: [{ type: 'terminal', terminalId }] });
      },
    });
    const models = new ModelSwitch();
    plugins.push(models.plugin());
    s = await AcpSession.open(stored, {
      client,
      attachments: host.attachments,
      warn: host.warn,
      models: {
        switch: models,
        list: () => host.models(cwd),
        pick: (ref) => host.pickModel(cwd, ref),
      },
      terminalOf: (callId) => terminals.get(callId),
      build: (policy) =>
        host.codingAgent(stored, {
          policy,
          plugins,
          approve: permissionHandler({
            sessionId: stored.session.id,
            session: stored.session,
            workspace: cwd,
            request: (params, signal) =>
              client.request(methods.client.session.requestPermission, params, { cancellationSignal: signal, stopWaitingOnCancel: true }),
          }),
        }),
    });
    sessions.set(s.id, s);
    return s;
  };

  const offerCommands = (s: AcpSession): void => {
    // After the response that names the session, so the client knows it.
    setImmediate(() => s.send({ sessionUpdate: 'available_commands_update', availableCommands: [...COMMANDS] }));
  };

  /** An open session of `id`, or the stored one opened, checked to belong to `cwd`. */
  const reopen = async (id: string, cwd: string): Promise<AcpSession> => {
    const dir = host.workspace(cwd);
    const live = sessions.get(id);
    const s = live ?? (await open(await host.store.open(id)));
    if (s.cwd !== dir) {
      if (!live) {
        sessions.delete(s.id);
        await s.close();
      }
      throw new AcpError('WORKSPACE_MISMATCH', `session ${id} belongs to ${s.cwd}, not ${dir}`, '$.cwd');
    }
    return s;
  };

  const app = acpAgent({ name: AGENT_NAME })
    .onRequest(methods.agent.initialize, ({ params }): InitializeResponse => {
      caps = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentInfo: { name: AGENT_NAME, title: 'dsh', version: host.version },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          sessionCapabilities: { list: {}, resume: {}, fork: {} },
        },
        authMethods: [],
      };
    })
    .onRequest(methods.agent.session.new, ({ params }) =>
      answer(async () => {
        noExtraDirectories(params.additionalDirectories);
        const cwd = host.workspace(params.cwd);
        const s = await open(await host.store.create({ cwd }));
        offerCommands(s);
        return { sessionId: s.id, modes: s.modes(), configOptions: await s.configOptions() };
      }),
    )
    .onRequest(methods.agent.session.load, ({ params }) =>
      answer(async () => {
        noExtraDirectories(params.additionalDirectories);
        const s = await reopen(params.sessionId, params.cwd);
        await s.replayHistory();
        offerCommands(s);
        return { modes: s.modes(), configOptions: await s.configOptions() };
      }),
    )
    .onRequest(methods.agent.session.resume, ({ params }) =>
      answer(async () => {
        noExtraDirectories(params.additionalDirectories);
        const s = await reopen(params.sessionId, params.cwd);
        offerCommands(s);
        return { modes: s.modes(), configOptions: await s.configOptions() };
      }),
    )
    .onRequest(methods.agent.session.fork, ({ params }) =>
      answer(async () => {
        noExtraDirectories(params.additionalDirectories);
        const cwd = host.workspace(params.cwd);
        const source = sessions.get(params.sessionId);
        if (source && source.agent.status === 'running')
          throw new AcpError('NOT_IDLE', 'a session forks between turns: wait for the turn to end, or cancel it');
        const s = await open(await host.store.fork(params.sessionId));
        if (s.cwd !== cwd) {
          sessions.delete(s.id);
          await s.close();
          throw new AcpError('WORKSPACE_MISMATCH', `session ${params.sessionId} belongs to ${s.cwd}, not ${cwd}`, '$.cwd');
        }
        offerCommands(s);
        return { sessionId: s.id, modes: s.modes(), configOptions: await s.configOptions() };
      }),
    )
    .onRequest(methods.agent.session.list, ({ params }) =>
      answer(async () => {
        const { sessions: all } = await host.store.list();
        const here = all
          .filter((s) => s.header.cwd !== undefined && (params.cwd ? s.header.cwd === params.cwd : true))
          .sort((a, b) => b.modifiedMs - a.modifiedMs);
        let start = 0;
        if (params.cursor) {
          start = /^\d+$/.test(params.cursor) ? Number(params.cursor) : Number.NaN;
          if (!Number.isSafeInteger(start) || start > here.length)
            throw new AcpError('INVALID_CURSOR', 'not a cursor this agent gave', '$.cursor');
        }
        const page = here
          .slice(start, start + LIST_PAGE)
          .map((s): SessionInfo => ({ sessionId: s.id, cwd: s.header.cwd!, updatedAt: new Date(s.modifiedMs).toISOString() }));
        return start + LIST_PAGE < here.length ? { sessions: page, nextCursor: String(start + LIST_PAGE) } : { sessions: page };
      }),
    )
    .onRequest(methods.agent.session.close, ({ params }) =>
      answer(async () => {
        const s = find(params.sessionId);
        sessions.delete(s.id);
        await s.close();
        return {};
      }),
    )
    .onRequest(methods.agent.session.setMode, ({ params }) =>
      answer(async () => {
        await find(params.sessionId).setMode(params.modeId);
        return {};
      }),
    )
    .onRequest(methods.agent.session.setConfigOption, ({ params }) =>
      answer(async () => {
        const s = find(params.sessionId);
        if (params.configId !== MODEL_OPTION)
          throw new AcpError(
            'UNKNOWN_CONFIG_OPTION',
            `no config option ${JSON.stringify(params.configId)}: the one there is is "model"`,
            '$.configId',
          );
        if (typeof params.value !== 'string') throw new AcpError('INVALID_CONFIG_VALUE', 'the model is a provider:model string', '$.value');
        await s.setModel(params.value, '$.value');
        return { configOptions: await s.configOptions() };
      }),
    )
    .onRequest(methods.agent.session.prompt, ({ params, signal }) => answer(() => find(params.sessionId).prompt(params.prompt, signal)))
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancel();
    });

  conn = app.connect(
    ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, Readable.toWeb(input) as ReadableStream<Uint8Array>),
  );
  await conn.closed.catch(() => undefined);
  const all = [...sessions.values()];
  sessions.clear();
  await Promise.allSettled(all.map((s) => s.close()));
}
