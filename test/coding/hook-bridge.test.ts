/**
 * The Claude Code / Codex hook bridges (issue 16 item 4), with real hook scripts: shell scripts
 * that read the JSON payload on stdin (each saves it, so the test reads what the hook was given)
 * and answer by exit status, stderr and stdout, run by the coding agent on a scripted model.
 * Expected values come from what the scripts were written to answer and from the log.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createCodingAgent,
  HookConfigError,
  HOOK_PLUGIN_NAME,
  mergeOutcomes,
  parseHookConfig,
  readHookConfig,
  type HookDialect,
} from '../../src/coding/index.js';
import { ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import type { SessionEvent } from '../../src/session/index.js';
import { agentIn, cmd, data, dirs, ofType, stdin, texts, workspace } from './support/hook-agent.js';

describe('PreToolUse', () => {
  it('a Claude Code hook that exits 2 denies the call before it runs; the model gets its stderr; both are recorded', async () => {
    const cwd = workspace(
      { PreToolUse: [{ matcher: 'Bash', ...cmd('deny.sh') }] },
      { 'deny.sh': 'cat > pre-stdin.json; echo "no shell in this repo" >&2; exit 2' },
    );
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'touch ran.txt' } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('make a file');
      expect(existsSync(join(cwd, 'ran.txt'))).toBe(false);
      const result = ofType(a.events(), 'tool/result')[0]!;
      expect(result.data.error?.code).toBe('DENIED');
      expect(texts(result.data.message)).toContain('no shell in this repo');
      // What the hook was given on stdin: Claude Code's PreToolUse payload.
      const p = stdin(cwd, 'pre-stdin.json');
      expect(p).toMatchObject({
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'touch ran.txt' },
        dsh_tool_name: 'bash',
        tool_use_id: 'c1',
        cwd,
        transcript_path: '',
      });
      expect(p.session_id).toBe(a.id);
      const invoked = ofType(a.events(), 'hook/invoked');
      const res = ofType(a.events(), 'hook/result');
      expect(invoked.map(data)).toEqual([
        {
          turn: 1,
          point: 'PreToolUse',
          dialect: 'claude-code',
          handlerId: 'claude-code:PreToolUse:1',
          command: './deny.sh',
          matcher: 'Bash',
          callId: 'c1',
        },
      ]);
      expect(res.map(data)[0]).toMatchObject({
        decision: 'deny',
        exitCode: 2,
        stderrSummary: 'no shell in this repo',
        reason: 'no shell in this repo',
      });
      // The pair sits between the call and its result.
      const seqOf = (e: SessionEvent): number => e.seq;
      const call = ofType(a.events(), 'tool/call')[0]!;
      expect(seqOf(call) < seqOf(invoked[0]!) && seqOf(res[0]!) < seqOf(result)).toBe(true);
    } finally {
      await a.close();
    }
  });

  it('"ask" goes to the approver with the hook\'s reason; under approval "never" it is a deny', async () => {
    const hooks = {
      PreToolUse: [
        {
          matcher: 'Read',
          hooks: [
            {
              type: 'command',
              command: `echo '${JSON.stringify({
                hookSpecificOutput: {
                  hookEventName: 'PreToolUse',
                  permissionDecision: 'ask',
                  permissionDecisionReason: 'reading needs a human',
                },
              })}'`,
            },
          ],
        },
      ],
    };
    const cwd = workspace(hooks);
    const asked: (string | undefined)[] = [];
    const call = [toolCallResponse([{ id: 'r1', name: 'read', args: { file_path: join(cwd, 'notes.txt') } }]), textResponse('ok')];
    const a = await agentIn(cwd, 'claude-code', call, {
      approval: 'ask',
      approve: async (req) => {
        asked.push(req.reason);
        return 'rejected' as const;
      },
    });
    try {
      await a.run('read notes');
      expect(asked).toEqual(['reading needs a human']);
      expect(ofType(a.events(), 'tool/result')[0]!.data.error?.code).toBe('APPROVAL_REJECTED');
      expect(data(ofType(a.events(), 'hook/result')[0]!).decision).toBe('ask');
    } finally {
      await a.close();
    }
    const b = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'r1', name: 'read', args: { file_path: join(cwd, 'notes.txt') } }]),
      textResponse('ok'),
    ]);
    try {
      await b.run('read notes');
      const r = ofType(b.events(), 'tool/result')[0]!;
      expect(r.data.error?.code).toBe('DENIED');
      expect(texts(r.data.message)).toContain('reading needs a human (a PreToolUse hook asked for approval, and the approval policy is');
    } finally {
      await b.close();
    }
  });

  it('runs before the permission rules, also where they would ask without going further', async () => {
    const cwd = workspace({ PreToolUse: [{ matcher: 'Bash', ...cmd('deny.sh') }] }, { 'deny.sh': 'echo "hook said no" >&2; exit 2' });
    // danger-full-access + approval ask: the permission rules answer "ask" for bash themselves.
    const a = await agentIn(
      cwd,
      'claude-code',
      [toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'true' } }]), textResponse('ok')],
      {
        approval: 'ask',
      },
    );
    try {
      await a.run('x');
      const r = ofType(a.events(), 'tool/result')[0]!;
      expect(r.data.error?.code).toBe('DENIED');
      expect(texts(r.data.message)).toContain('hook said no');
      expect(ofType(a.events(), 'approval/asked')).toHaveLength(0);
    } finally {
      await a.close();
    }
  });

  it('a Codex matcher is an unanchored regular expression; a Claude Code plain name is exact', async () => {
    const hooks = { PreToolUse: [{ matcher: 'as', ...cmd('deny.sh') }] };
    const script = { 'deny.sh': 'echo denied >&2; exit 2' };
    const cwd = workspace(hooks, script);
    for (const [dialect, code] of [
      ['codex', 'DENIED'],
      ['claude-code', undefined],
    ] as const) {
      const a = await agentIn(cwd, dialect, [
        toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'true' } }]),
        textResponse('ok'),
      ]);
      try {
        await a.run('x');
        expect(ofType(a.events(), 'tool/result')[0]!.data.error?.code).toBe(code);
      } finally {
        await a.close();
      }
    }
  });
});

describe('PostToolUse', () => {
  it('additional context reaches the next request as a recorded user message from the bridge', async () => {
    const note = 'Note: output checked against the audit log.';
    const cwd = workspace({
      PostToolUse: [
        {
          matcher: 'bash',
          hooks: [
            {
              type: 'command',
              command: `cat > post-stdin.json; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"${note}"}}'`,
            },
          ],
        },
      ],
    });
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'echo HELLO' } }]),
      textResponse('HELLO'),
    ]);
    try {
      await a.run('say hello');
      const second = a.model.requests[1]!;
      const last = second.messages.at(-1)!;
      expect(last.source).toMatchObject({ kind: 'plugin', plugin: HOOK_PLUGIN_NAME['claude-code'], hook: 'PostToolUse' });
      expect(texts(last)).toBe(note);
      // The request's message is the logged one.
      const logged = ofType(a.events(), 'user/message').find((e) => texts(e.data) === note);
      expect(logged?.data.id).toBe(last.id);
      expect(stdin(cwd, 'post-stdin.json')).toMatchObject({
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        dsh_tool_name: 'bash',
        tool_response: 'HELLO\n',
      });
      expect(data(ofType(a.events(), 'hook/result')[0]!)).toMatchObject({ decision: 'pass', exitCode: 0, additionalContext: [note] });
    } finally {
      await a.close();
    }
  });

  it('a Codex hook exiting 2 blocks the result: the model sees the reason, the log keeps the output; Codex extras on stdin', async () => {
    const cwd = workspace(
      { PostToolUse: [{ matcher: 'bash', ...cmd('block.sh') }] },
      { 'block.sh': 'cat > post-stdin.json; echo "output rejected by policy" >&2; exit 2' },
    );
    const a = await agentIn(cwd, 'codex', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'echo SECRET' } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('x');
      const r = ofType(a.events(), 'tool/result')[0]!;
      expect(r.data.error?.code).toBe('BLOCKED');
      expect(texts(r.data.message)).toContain('output rejected by policy');
      expect(texts(r.data.message)).not.toContain('SECRET');
      expect(JSON.stringify(r.data.meta)).toContain('SECRET');
      expect(stdin(cwd, 'post-stdin.json')).toMatchObject({
        hook_event_name: 'PostToolUse',
        turn_id: '1',
        model: 'deepseek-v4-flash',
        transcript_path: null,
      });
    } finally {
      await a.close();
    }
  });
});

describe('UserPromptSubmit and SessionStart', () => {
  it('a blocking prompt hook ends the turn blocked before any request, recording why', async () => {
    const cwd = workspace(
      { UserPromptSubmit: [{ matcher: '[', ...cmd('block.sh') }] },
      {
        'block.sh': 'cat > prompt-stdin.json; echo "blocked by policy hook" >&2; exit 2',
      },
    );
    const a = await agentIn(cwd, 'claude-code', [textResponse('never sent')]);
    try {
      await a.run('Delete everything in the repo.');
      expect(a.model.requests).toHaveLength(0);
      expect(ofType(a.events(), 'turn/end')[0]!.data.reason).toEqual({ kind: 'blocked' });
      expect(data(ofType(a.events(), 'hook/result')[0]!)).toMatchObject({ decision: 'block', reason: 'blocked by policy hook' });
      expect(stdin(cwd, 'prompt-stdin.json')).toMatchObject({
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Delete everything in the repo.',
      });
      expect(ofType(a.events(), 'user/message')).toHaveLength(0);
    } finally {
      await a.close();
    }
  });

  it("a Codex prompt hook's plain stdout and a SessionStart hook's context follow the prompt, in the log", async () => {
    const cwd = workspace({
      SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'cat > start-stdin.json; echo "The repo uses tabs."' }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: "echo 'The favourite colour is teal.'" }] }],
    });
    const a = await agentIn(cwd, 'codex', [textResponse('teal')]);
    try {
      await a.run('What is my favourite colour?');
      const sent = a.model.requests[0]!.messages.map((m) => [m.source.kind === 'plugin' ? m.source.plugin : m.source.kind, texts(m)]);
      expect(sent.slice(0, 3)).toEqual([
        ['user', 'What is my favourite colour?'],
        ['hooks-codex', 'The repo uses tabs.'],
        ['hooks-codex', 'The favourite colour is teal.'],
      ]);
      expect(stdin(cwd, 'start-stdin.json')).toMatchObject({ hook_event_name: 'SessionStart', source: 'startup' });
      expect(ofType(a.events(), 'hook/invoked').map((e) => data(e).point)).toEqual(['SessionStart', 'UserPromptSubmit']);
    } finally {
      await a.close();
    }
  });
});

describe('Stop', () => {
  it('a Stop hook that exits 2 keeps the turn going once with its reason; stop_hook_active says so the second time', async () => {
    const cwd = workspace(
      { Stop: [cmd('stop.sh')] },
      {
        'stop.sh': [
          'n=$(ls stop-*.json 2>/dev/null | wc -l)',
          'cat > stop-$n.json',
          'if [ "$n" = 0 ]; then echo "Also reply with SECOND." >&2; exit 2; fi',
          'exit 0',
        ].join('\n'),
      },
    );
    const a = await agentIn(cwd, 'claude-code', [textResponse('FIRST'), textResponse('SECOND')]);
    try {
      await a.run('Reply FIRST');
      expect(a.model.requests).toHaveLength(2);
      const steer = a.model.requests[1]!.messages.at(-1)!;
      expect(texts(steer)).toBe('Also reply with SECOND.');
      expect(steer.source).toMatchObject({ kind: 'plugin', plugin: 'hooks-claude-code' });
      expect(stdin(cwd, 'stop-0.json').stop_hook_active).toBe(false);
      expect(stdin(cwd, 'stop-1.json').stop_hook_active).toBe(true);
      expect(ofType(a.events(), 'hook/result').map((e) => data(e).decision)).toEqual(['block', 'pass']);
      expect(ofType(a.events(), 'turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    } finally {
      await a.close();
    }
  });

  it('a Stop hook that always blocks is stopped after the limit, with a typed record', async () => {
    const cwd = workspace({ Stop: [cmd('stop.sh')] }, { 'stop.sh': 'echo again >&2; exit 2' });
    const script = Array.from({ length: 12 }, (_, i) => textResponse(`answer ${i}`));
    const a = await agentIn(cwd, 'codex', script);
    try {
      await a.run('go');
      expect(a.model.requests).toHaveLength(9); // the first answer, then 8 continues
      const last = ofType(a.events(), 'hook/result').at(-1)!;
      expect(data(last)).toMatchObject({ handlerId: 'stop-limit', decision: 'error', error: { code: 'HOOK_STOP_LIMIT' } });
      expect(ofType(a.events(), 'turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    } finally {
      await a.close();
    }
  });
});

describe('failures never crash the run', () => {
  it('a hook past its timeout is killed and recorded HOOK_TIMEOUT; one exiting 1 is HOOK_FAILED; the tool runs', async () => {
    const cwd = workspace(
      {
        PreToolUse: [
          { matcher: 'bash', hooks: [{ type: 'command', command: 'sleep 30', timeout: 0.3 }] },
          { matcher: 'bash', ...cmd('fail.sh') },
        ],
      },
      { 'fail.sh': 'echo "broken hook" >&2; exit 1' },
    );
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'touch ran.txt' } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('x');
      const res = ofType(a.events(), 'hook/result').map(data);
      expect(res[0]).toMatchObject({ decision: 'error', error: { code: 'HOOK_TIMEOUT' } });
      expect(res[0]!.durationMs as number).toBeLessThan(10_000);
      expect(res[1]).toMatchObject({
        decision: 'error',
        exitCode: 1,
        error: { code: 'HOOK_FAILED', message: 'the hook exited with status 1: broken hook' },
      });
      expect(existsSync(join(cwd, 'ran.txt'))).toBe(true);
    } finally {
      await a.close();
    }
  });

  it('"continue": false stops the turn, with the hook as the cause', async () => {
    const cwd = workspace({
      PostToolUse: [{ hooks: [{ type: 'command', command: `echo '{"continue":false,"stopReason":"audit failed"}'` }] }],
    });
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'true' } }]),
      textResponse('never'),
    ]);
    try {
      await a.run('x');
      expect(ofType(a.events(), 'turn/end')[0]!.data.reason).toEqual({ kind: 'aborted', reason: { kind: 'hook', reason: 'audit failed' } });
      expect(data(ofType(a.events(), 'hook/result')[0]!)).toMatchObject({ continue: false, stopReason: 'audit failed' });
      expect(a.model.requests).toHaveLength(1);
    } finally {
      await a.close();
    }
  });
});

describe('trust and configuration', () => {
  function project(): string {
    const dir = workspace({});
    mkdirSync(join(dir, '.claude'));
    writeFileSync(
      join(dir, '.claude', 'settings.json'),
      JSON.stringify({ model: 'x', hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'touch hook-ran; exit 2' }] }] } }),
    );
    return dir;
  }

  it("a project's own hooks do not run until the user config trusts the workspace", async () => {
    const cwd = project();
    const untrusted = await createCodingAgent({
      cwd,
      config: {},
      adapters: [new ScriptedAdapter([textResponse('hi')], { providers: ['deepseek'] })],
      model: 'deepseek:deepseek-v4-flash',
      mcp: false,
    });
    try {
      expect(untrusted.hookWarnings.join('\n')).toMatch(/settings\.json: its claude-code hooks do not run: this workspace is not trusted/);
      untrusted.agent.prompt('hi');
      await untrusted.agent.whenIdle();
      expect(existsSync(join(cwd, 'hook-ran'))).toBe(false);
      expect(ofType(untrusted.agent.session.events, 'turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    } finally {
      await untrusted.close();
    }
    const trusted = await createCodingAgent({
      cwd,
      config: { trustedProjects: [cwd] },
      adapters: [new ScriptedAdapter([textResponse('hi')], { providers: ['deepseek'] })],
      model: 'deepseek:deepseek-v4-flash',
      mcp: false,
    });
    try {
      expect(trusted.hookWarnings).toEqual([]);
      trusted.agent.prompt('hi');
      await trusted.agent.whenIdle();
      expect(existsSync(join(cwd, 'hook-ran'))).toBe(true);
      expect(ofType(trusted.agent.session.events, 'turn/end')[0]!.data.reason).toEqual({ kind: 'blocked' });
    } finally {
      await trusted.close();
    }
  });

  it('refuses a file whole with a typed error naming the file and JSON path; warns about what it does not run', () => {
    const f = '/p/hooks.json';
    const refuse = (doc: unknown, dialect: HookDialect = 'claude-code'): HookConfigError => {
      try {
        parseHookConfig(doc, f, dialect);
      } catch (e) {
        if (e instanceof HookConfigError) return e;
        throw e;
      }
      throw new Error('not refused');
    };
    const RUNS = 'PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart';
    const bad = refuse({ hooks: { PreToolUse: [{ matcher: '[', hooks: [{ type: 'command', command: 'x' }] }] } });
    expect([bad.code, bad.path, bad.file]).toEqual(['HOOK_CONFIG_INVALID', '$.hooks.PreToolUse[0].matcher', f]);
    expect(refuse({ hooks: { Stop: {} } }).path).toBe('$.hooks.Stop');
    expect(refuse({ hooks: { Stop: [{ hooks: [{ type: 'command', command: '' }] }] } }).path).toBe('$.hooks.Stop[0].hooks[0].command');
    expect(refuse({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: -1 }] }] } }).path).toBe(
      '$.hooks.Stop[0].hooks[0].timeout',
    );
    expect(refuse([1]).path).toBe('$');
    // A point without a subject ignores its matcher (not compiled, not refused).
    const ok = parseHookConfig(
      {
        hooks: {
          UserPromptSubmit: [{ matcher: '[', hooks: [{ type: 'command', command: 'x' }] }],
          Notification: [],
          PreCompact: [{ hooks: [] }],
          Stop: [{ hooks: [{ type: 'http', url: 'u' }] }],
        },
      },
      f,
      'codex',
    );
    expect(ok.points.get('UserPromptSubmit')![0]!.test('anything')).toBe(true);
    expect(ok.warnings).toEqual([
      `${f}: $.hooks.Notification: codex hook event "Notification" is not run by dsh (it runs ${RUNS})`,
      `${f}: $.hooks.PreCompact: codex hook event "PreCompact" is not run by dsh (it runs ${RUNS})`,
      `${f}: $.hooks.Stop[0].hooks[0]: a hook of type "http" is not run by dsh (only "command")`,
    ]);
    const dir = workspace({});
    writeFileSync(join(dir, 'broken.json'), '{"hooks": ');
    expect(() => readHookConfig(join(dir, 'broken.json'), 'codex')).toThrow(expect.objectContaining({ code: 'HOOK_CONFIG_NOT_JSON' }));
    expect(() => readHookConfig(join(dir, 'missing.json'), 'codex')).toThrow(expect.objectContaining({ code: 'HOOK_CONFIG_UNREADABLE' }));
  });

  it('folds several answers to the most restrictive, joining its reasons and keeping every context', () => {
    const m = mergeOutcomes([
      { decision: 'allow', context: ['a'] },
      { decision: 'ask', reason: 'ask 1', context: [] },
      { decision: 'deny', reason: 'deny 1', context: ['b'] },
      { decision: 'deny', reason: 'deny 2', context: [] },
      { decision: 'error', context: [], failure: { code: 'HOOK_FAILED', message: 'x' } },
    ]);
    expect(m).toEqual({ decision: 'deny', reason: 'deny 1\n\ndeny 2', context: ['a', 'b'] });
    expect(mergeOutcomes([{ decision: 'error', context: [] }]).decision).toBe('pass');
  });
});

describe('several hooks of one event', () => {
  it('run together, as in Claude Code: two hooks that each wait for the other both finish; each result recorded', async () => {
    // Each script marks that it started, then waits (up to 5 s) for the other's mark: run one after
    // the other, the first would give up and fail (exit 1, HOOK_FAILED).
    const wait = (me: string, other: string): string =>
      `touch ${me}.started; i=0; while [ ! -f ${other}.started ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; ` +
      `[ -f ${other}.started ] || { echo "${other} never started" >&2; exit 1; }; cat > ${me}-stdin.json`;
    const cwd = workspace(
      {
        PreToolUse: [
          { matcher: 'Bash', ...cmd('a.sh') },
          { matcher: 'Bash', ...cmd('b.sh') },
        ],
      },
      { 'a.sh': wait('a', 'b'), 'b.sh': wait('b', 'a') },
    );
    const a = await agentIn(cwd, 'claude-code', [
      toolCallResponse([{ id: 'c1', name: 'bash', args: { command: 'touch ran.txt' } }]),
      textResponse('ok'),
    ]);
    try {
      await a.run('go');
      const results = ofType(a.events(), 'hook/result').map(data);
      expect(results.map((r) => [r.handlerId, r.decision, r.error])).toEqual([
        ['claude-code:PreToolUse:1', 'pass', undefined],
        ['claude-code:PreToolUse:2', 'pass', undefined],
      ]);
      expect(stdin(cwd, 'a-stdin.json').tool_use_id).toBe('c1');
      expect(stdin(cwd, 'b-stdin.json').tool_use_id).toBe('c1');
      // Both started before either answered: the two invocations precede the two results.
      const kinds = a.events().flatMap((e) => (e.type === 'hook/invoked' || e.type === 'hook/result' ? [e.type] : []));
      expect(kinds).toEqual(['hook/invoked', 'hook/invoked', 'hook/result', 'hook/result']);
      expect(existsSync(join(cwd, 'ran.txt'))).toBe(true);
    } finally {
      await a.close();
    }
  });
});

describe('user-level hook files', () => {
  it("~/.claude/settings.json and ~/.codex/hooks.json run in an untrusted workspace; the project's own still do not", async () => {
    const home = mkdtempSync(join(tmpdir(), 'dsh-hooks-home-'));
    dirs.push(home);
    mkdirSync(join(home, '.claude'));
    mkdirSync(join(home, '.codex'));
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'cat > user-cc.json' }] }] } }),
    );
    writeFileSync(
      join(home, '.codex', 'hooks.json'),
      JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'cat > user-codex.json' }] }] } }),
    );
    const cwd = workspace({});
    mkdirSync(join(cwd, '.claude'));
    writeFileSync(
      join(cwd, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'touch project-ran' }] }] } }),
    );
    const coding = await createCodingAgent({
      cwd,
      config: {},
      adapters: [new ScriptedAdapter([textResponse('hi')], { providers: ['deepseek'] })],
      model: 'deepseek:deepseek-v4-flash',
      mcp: false,
      hooks: { home },
    });
    try {
      expect(coding.hookWarnings.join('\n')).toMatch(
        /\.claude\/settings\.json: its claude-code hooks do not run: this workspace is not trusted/,
      );
      coding.agent.prompt('hello there');
      await coding.agent.whenIdle();
      expect(stdin(cwd, 'user-cc.json')).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'hello there' });
      expect(stdin(cwd, 'user-codex.json')).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'hello there' });
      expect(existsSync(join(cwd, 'project-ran'))).toBe(false);
      expect(
        ofType(coding.agent.session.events, 'hook/invoked')
          .map(data)
          .map((d) => d.dialect),
      ).toEqual(['claude-code', 'codex']);
    } finally {
      await coding.close();
    }
  });

  it('a workspace at the home directory reads its files once', async () => {
    const home = workspace({});
    mkdirSync(join(home, '.claude'));
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo x >> ran' }] }] } }),
    );
    const coding = await createCodingAgent({
      cwd: home,
      config: { trustedProjects: [home] },
      adapters: [new ScriptedAdapter([textResponse('hi')], { providers: ['deepseek'] })],
      model: 'deepseek:deepseek-v4-flash',
      mcp: false,
      hooks: { home },
    });
    try {
      coding.agent.prompt('hi');
      await coding.agent.whenIdle();
      expect(readFileSync(join(home, 'ran'), 'utf8')).toBe('x\n');
    } finally {
      await coding.close();
    }
  });
});
