/**
 * Generator of `examples/fix-typo.jsonl`, the bundled example log: a two-turn dsh v0 session
 * built through the real `Session` API with a fixed clock and fixed ids, so the bytes are the
 * same on every run. `example.test.ts` checks the committed file against it; run
 * `DSH_UPDATE_EXAMPLE=1 npx vitest run test/cli/example.test.ts` to rewrite it after a change.
 *
 * The shape follows what dsh writes: the prompt passes through the inbox, the turn opens, the
 * runtime-context snapshot and the request header are recorded inside step 1, each provider call
 * streams chunks (block-start, deltas, block-end, usage, finish) before its assistant message,
 * and tool calls are recorded before their results.
 */
import { encodeJsonl, Session } from '../../../src/session/index.js';
import type { ContentBlock, UserMessage } from '../../../src/model/message.js';
import type { StreamChunk } from '../../../src/model/stream.js';
import type { TokenUsage } from '../../../src/model/usage.js';
import type { ToolSchema } from '../../../src/model/request.js';

const CWD = '/tmp/demo-repo';
const PROVIDER = 'deepseek';
const MODEL = 'deepseek-chat';
const CREATED_AT = Date.UTC(2026, 0, 15, 9, 30, 0);

const TOOLS: ToolSchema[] = [
  {
    name: 'grep',
    description: 'Search file contents with a regular expression.',
    parameters: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } }, required: ['pattern'] },
  },
  {
    name: 'read',
    description: 'Read a text file, with line numbers.',
    parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
  {
    name: 'edit',
    description: 'Replace an exact string in a file.',
    parameters: {
      type: 'object',
      properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
];

const SYSTEM =
  "You are dsh, a coding agent working in the user's repository. Use the tools to inspect and change files; keep answers short.";

/** Word-sized deltas, as a provider streams them. */
function tokens(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [text];
}

/** Argument JSON in small slices. */
function slices(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

type Planned = { type: 'reasoning' | 'text'; text: string } | { type: 'tool-call'; id: string; name: string; arguments: string };

export function makeFixTypo(): string {
  let now = CREATED_AT;
  const clock = (): number => now;
  const tick = (ms: number): void => {
    now += ms;
  };
  let ids = 0;
  const id = (kind: string): string => `${kind}-${String(++ids).padStart(4, '0')}`;

  const session = Session.create({
    id: '5f0c1e2a-7b3d-4c8e-9a61-0d2f4b6c8e10',
    header: { cwd: CWD, createdAt: CREATED_AT, delegationDepth: 0 },
    clock,
  });
  let turn = 0;
  let step = 0;
  let input = 1850;
  let cacheRead = 0;

  const userPrompt = (text: string): UserMessage => ({
    id: id('msg'),
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'user' },
  });

  const beginTurn = (prompt: UserMessage): void => {
    tick(40);
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
    tick(3);
    turn++;
    step = 0;
    session.append('turn/start', { turn });
    tick(1);
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
  };

  const beginStep = (): void => {
    tick(2);
    step++;
    session.append('step/start', { turn, step });
  };

  /** One provider call: its chunks, then the assembled message with usage. */
  const respond = (blocks: Planned[], finish: 'stop' | 'tool-calls'): void => {
    const seqs: number[] = [];
    const chunk = (c: StreamChunk, ms: number): void => {
      tick(ms);
      seqs.push(session.append('assistant/chunk', { turn, step, chunk: c }).seq);
    };
    tick(420); // time to first token
    const content: ContentBlock[] = [];
    blocks.forEach((b, index) => {
      chunk({ type: 'block-start', index, blockType: b.type }, 0);
      if (b.type === 'tool-call') {
        for (const a of slices(b.arguments)) chunk({ type: 'tool-call-delta', index, id: b.id, name: b.name, argumentsDelta: a }, 18);
        content.push({ type: 'tool-call', id: b.id, name: b.name, arguments: b.arguments });
      } else {
        for (const t of tokens(b.text)) chunk({ type: b.type === 'text' ? 'text-delta' : 'reasoning-delta', index, text: t }, 24);
        content.push({ type: b.type, text: b.text });
      }
      chunk({ type: 'block-end', index, block: content[index]! }, 1);
    });
    const reasoning = blocks.filter((b) => b.type === 'reasoning').reduce((n, b) => n + tokens((b as { text: string }).text).length, 0);
    const output = seqs.length + 4;
    const usage: TokenUsage = {
      inputTokens: input - cacheRead,
      outputTokens: output,
      cacheReadTokens: cacheRead,
      ...(reasoning ? { reasoningTokens: reasoning } : {}),
    };
    chunk({ type: 'usage', usage }, 2);
    chunk({ type: 'finish', reason: { kind: finish } }, 0);
    tick(1);
    session.append(
      'assistant/message',
      {
        turn,
        step,
        message: { id: id('msg'), role: 'assistant', content, source: { kind: 'model', provider: PROVIDER, model: MODEL } },
        usage,
      },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
    // The next request re-reads everything so far from the provider's prefix cache.
    cacheRead = input;
    input += output + 60;
  };

  const runTool = (callId: string, name: string, args: string, result: string, error?: { name: string; code: string }): void => {
    tick(2);
    const call = session.append('tool/call', { turn, step, callId, name, arguments: args });
    tick(35);
    session.append(
      'tool/result',
      {
        turn,
        step,
        message: {
          id: id('msg'),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: result }], isError: error !== undefined }],
          source: { kind: 'tool', callId },
        },
        ...(error ? { error } : {}),
      },
      { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
    );
    input += Math.ceil(result.length / 4);
  };

  const endStep = (): void => {
    tick(1);
    session.append('step/end', { turn, step });
  };
  const endTurn = (): void => {
    tick(1);
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  };

  // ---- Turn 1: find, read, edit, answer.
  const prompt1 = userPrompt('Fix the typo in README.md');
  beginTurn(prompt1);
  beginStep();
  tick(1);
  session.append('user/message', prompt1, { surfaceOp: 'append' });
  const context = `Working directory: ${CWD}\nGit branch: main (clean)`;
  session.append(
    'user/message',
    {
      id: id('msg'),
      role: 'user',
      content: [{ type: 'text', text: `Current runtime context.\n\n${context}` }],
      source: { kind: 'plugin', plugin: 'runtime-context', form: 'snapshot', sections: [{ name: 'workspace', text: context }] },
    },
    { surfaceOp: 'append' },
  );
  tick(1);
  session.append('request/header', {
    header: { config: { provider: PROVIDER, model: MODEL, maxTokens: 8192 }, system: SYSTEM, tools: TOOLS },
    reason: 'initial',
  });
  session.append('request/context', { provider: PROVIDER, model: MODEL, contextWindow: 131072 });

  const grepArgs = '{"pattern":"recieve|teh|occured|seperate","path":"README.md"}';
  respond(
    [
      { type: 'reasoning', text: 'The user wants a typo fixed in README.md. I will search it for common misspellings first.' },
      { type: 'tool-call', id: 'call_01_grep', name: 'grep', arguments: grepArgs },
    ],
    'tool-calls',
  );
  runTool('call_01_grep', 'grep', grepArgs, 'README.md:5:Pass --quiet to recieve only errors.');
  endStep();

  beginStep();
  const readArgs = '{"file_path":"README.md"}';
  respond(
    [
      { type: 'reasoning', text: 'Line 5 says "recieve". Let me read the file to edit the exact text.' },
      { type: 'tool-call', id: 'call_02_read', name: 'read', arguments: readArgs },
    ],
    'tool-calls',
  );
  runTool('call_02_read', 'read', readArgs, '1: # demo\n2:\n3: A tiny command-line tool.\n4:\n5: Pass --quiet to recieve only errors.\n');
  endStep();

  beginStep();
  const editArgs = '{"file_path":"README.md","old_string":"to recieve only","new_string":"to receive only"}';
  respond(
    [
      { type: 'reasoning', text: 'Replace "recieve" with "receive" on line 5.' },
      { type: 'tool-call', id: 'call_03_edit', name: 'edit', arguments: editArgs },
    ],
    'tool-calls',
  );
  runTool('call_03_edit', 'edit', editArgs, 'Edited README.md: 1 replacement.');
  endStep();

  beginStep();
  respond(
    [
      { type: 'reasoning', text: 'The edit succeeded; no other misspellings matched.' },
      { type: 'text', text: 'Fixed the typo in README.md: line 5 said "recieve", it now says "receive".' },
    ],
    'stop',
  );
  endStep();
  endTurn();

  // ---- Turn 2: a follow-up whose tool call fails.
  tick(9000);
  const prompt2 = userPrompt('Also fix it in docs/usage.md');
  beginTurn(prompt2);
  beginStep();
  tick(1);
  session.append('user/message', prompt2, { surfaceOp: 'append' });
  const usageArgs = '{"file_path":"docs/usage.md"}';
  respond(
    [
      { type: 'reasoning', text: 'Read docs/usage.md and look for the same misspelling.' },
      { type: 'tool-call', id: 'call_04_read', name: 'read', arguments: usageArgs },
    ],
    'tool-calls',
  );
  runTool('call_04_read', 'read', usageArgs, `Error: cannot read "${CWD}/docs/usage.md": not found`, {
    name: 'FsError',
    code: 'FS_NOT_FOUND',
  });
  endStep();

  beginStep();
  respond(
    [
      {
        type: 'text',
        text: 'There is no docs/usage.md in this repository, so there is nothing more to fix; README.md was the only file with the typo.',
      },
    ],
    'stop',
  );
  endStep();
  endTurn();

  return encodeJsonl(session.header, session.events);
}
