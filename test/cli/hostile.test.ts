/**
 * A log is untrusted text. Whatever its messages, ids, tool output or even its broken lines
 * contain, no command may emit a raw control sequence (ESC/CSI/OSC, C1 CSI, BEL, CR) or a bidi
 * override to the terminal; --json output stays lossless.
 */
import { describe, expect, it } from 'vitest';
import { deepEqual, encodeJsonl, Session } from '../../src/session/index.js';
import { scratch } from './support/files.js';
import type { Run } from './support/run.js';
import { dshIn as dsh, dshAllIn as dshAll } from './support/inproc.js';

const file = scratch();
const ESC = '\x1b';
const EVIL = `${ESC}]0;pwned${ESC}\\${ESC}[2J${ESC}[31mred\r\u009b31m\u0007\u202eevil${ESC}[0m`;

/** Bytes a terminal would act on. */
const FORBIDDEN: [string, Buffer][] = [
  ['ESC', Buffer.from([0x1b])],
  ['C1 CSI', Buffer.from('\u009b', 'utf8')],
  ['BEL', Buffer.from([0x07])],
  ['CR', Buffer.from([0x0d])],
  ['RLO', Buffer.from('\u202e', 'utf8')],
];

function expectInert(r: Run, what: string): void {
  for (const [name, bytes] of FORBIDDEN) {
    expect(r.rawOut.includes(bytes), `${what}: stdout has a raw ${name}`).toBe(false);
    expect(r.rawErr.includes(bytes), `${what}: stderr has a raw ${name}`).toBe(false);
  }
}

function hostileLog(): string {
  let t = 1_700_000_000_000;
  const s = Session.create({
    id: `id-${EVIL}`,
    header: { cwd: `/tmp/${EVIL}`, createdAt: Number.MAX_SAFE_INTEGER, delegationDepth: 0 },
    clock: () => (t += 10),
  });
  const turn = 1;
  const step = 1;
  s.append('turn/start', { turn });
  s.append('step/start', { turn, step });
  s.append(
    'user/message',
    { id: `u-${EVIL}`, role: 'user', content: [{ type: 'text', text: EVIL }], source: { kind: 'plugin', plugin: EVIL, form: 'notice' } },
    { surfaceOp: 'append' },
  );
  s.append('request/header', {
    header: { config: { provider: EVIL, model: EVIL }, system: EVIL, tools: [{ name: EVIL, description: EVIL, parameters: {} }] },
    reason: 'initial',
  });
  for (let i = 0; i < 4; i++) s.append('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text: EVIL } });
  s.append('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: EVIL, code: EVIL } } } });
  s.append(
    'assistant/message',
    {
      turn,
      step,
      message: {
        id: EVIL,
        role: 'assistant',
        content: [
          { type: 'reasoning', text: EVIL },
          { type: 'text', text: EVIL },
          { type: 'tool-call', id: EVIL, name: EVIL, arguments: EVIL },
        ],
        source: { kind: 'model', provider: EVIL, model: EVIL },
      },
      usage: { inputTokens: 1, outputTokens: 1 },
    },
    { surfaceOp: 'append' },
  );
  s.append('tool/call', { turn, step, callId: EVIL, name: EVIL, arguments: EVIL });
  s.append(
    'tool/result',
    {
      turn,
      step,
      message: {
        id: EVIL,
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: EVIL, content: [{ type: 'text', text: EVIL }], isError: true }],
        source: { kind: 'tool', callId: EVIL },
      },
      error: { name: EVIL, code: EVIL },
    },
    { surfaceOp: 'append' },
  );
  s.append('session/title', { title: EVIL });
  s.append('agent/inbox/spliced', {
    target: 'next-turn',
    start: 0,
    inserted: [{ id: EVIL, role: 'user', content: [{ type: 'text', text: EVIL }], source: { kind: 'user' } }],
  });
  s.append('todo/write', { todos: [{ content: EVIL, status: 'in_progress' }] });
  s.append('step/end', { turn, step });
  s.append('turn/end', { turn, reason: { kind: 'error', error: { message: EVIL, code: EVIL } } });
  return encodeJsonl(s.header, s.events);
}

describe('a hostile log cannot drive the terminal', () => {
  const text = hostileLog();
  const p = file('hostile.jsonl', text);

  it('no command prints a raw control sequence from it', async () => {
    const argvs = [
      ['log', 'check', p],
      ['log', 'check', '--json', p],
      ['log', 'show', p],
      ['log', 'show', '--full', p],
      ['log', 'messages', p],
      ['log', 'messages', '--brief', p],
      ['log', 'messages', '--json', p],
    ];
    const runs = await dshAll(argvs);
    runs.forEach((r, i) => {
      expect(r.code, `${argvs[i]!.join(' ')}: ${r.stderr}`).toBe(0);
      expectInert(r, argvs[i]!.join(' '));
    });
    // The escapes are shown, not dropped: a reader can see what the log holds. The backslash of
    // ST (ESC \) stands before an ESC, so it is shown as \\ (shown as one, `\e\\e[2J` would read as ESC, `\`, `e[2J`).
    expect(runs[2]!.stdout).toContain('\\e]0;pwned\\e\\\\\\e[2J\\e[31mred');
    expect(runs[4]!.stdout).toContain('\\r\\x9b31m\\x07\\u202eevil');
  });

  it('--json stays lossless: the parsed text is the log text', async () => {
    const r = await dsh(['log', 'messages', '--json', p]);
    const messages = JSON.parse(r.stdout) as { content: { type: string; text?: string }[] }[];
    expect(messages[0]!.content[0]!.text).toBe(EVIL);
  });

  it('a corrupt line full of escapes is reported inertly', async () => {
    const lines = text.split('\n');
    lines[3] = `{"type":${EVIL}`;
    const bad = file('hostile-corrupt.jsonl', lines.join('\n'));
    for (const argv of [
      ['log', 'check', bad],
      ['log', 'show', bad],
      ['log', 'check', '--json', bad],
    ]) {
      const r = await dsh(argv);
      expect(r.code).toBe(1);
      expectInert(r, argv.join(' '));
    }
  });

  it('escapes in file names and rejected arguments are inert too', async () => {
    const r1 = await dsh(['log', 'check', `/nonexistent/${EVIL}.jsonl`]);
    expect(r1.code).toBe(1);
    expectInert(r1, 'missing file');
    const r2 = await dsh(['log', 'show', `--${EVIL}`, p]);
    expect(r2.code).toBe(2);
    expectInert(r2, 'unknown option');
  });
});

describe('a log nested deeper than a JavaScript stack', () => {
  /** Tool-result blocks nested `depth` levels in one user message, and a plugin event as deep. */
  function deepLog(depth: number): { text: string; message: unknown; plugin: unknown } {
    let block: unknown = { type: 'text', text: 'bottom' };
    for (let i = 0; i < depth; i++) block = { type: 'tool-result', toolCallId: 'c', content: [block] };
    let plugin: unknown = 'bottom';
    for (let i = 0; i < depth; i++) plugin = [plugin];
    const s = Session.create({ id: 'deep', header: { cwd: '/w' }, clock: () => 1 });
    const message = { id: 'm', role: 'user', content: [block], source: { kind: 'user' } };
    s.append('user/message', message as never, { surfaceOp: 'append' });
    (s.append as unknown as (t: string, d: unknown, o: unknown) => unknown).call(
      s,
      'feedback/record',
      { nested: plugin },
      { ignorable: true },
    );
    return { text: encodeJsonl(s.header, s.events), message, plugin };
  }

  it('loads, shows and prints: no command fails; --json is lossless (compact past the native limit)', async () => {
    const depth = 20_000;
    const { text, message } = deepLog(depth);
    const p = file('deep.jsonl', text);
    const [check, show, messages, json] = (await dshAll([
      ['log', 'check', p],
      ['log', 'show', p],
      ['log', 'messages', p],
      ['log', 'messages', '--json', p],
    ])) as [Run, Run, Run, Run];
    for (const r of [check, show, messages, json]) expect(r.code, r.stderr).toBe(0);
    // The text view indents 32 levels, then says what it leaves out.
    const lines = messages.stdout.split('\n');
    expect(lines.filter((l) => l.trim().startsWith('tool-result [c] ok'))).toHaveLength(33);
    expect(lines).toContain(`${' '.repeat(4 + 2 * 33)}… blocks nested deeper than 32 levels are not shown (--json shows them)`);
    expect(show.stdout).toContain('feedback/record');
    // Iterative comparison: vitest's toEqual recurses, and would overflow on this value itself.
    expect(deepEqual(JSON.parse(json.stdout), [message])).toBe(true);
    expect(deepEqual(JSON.parse(json.stdout), [{ ...(message as object), id: 'other' }])).toBe(false);
  });
});
