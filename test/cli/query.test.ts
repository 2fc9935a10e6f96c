/**
 * The query commands: `dsh log turn`, `call`, `trace`, `stats` and `check --alerts`. Expected
 * values come from the raw example log (support/raw-log.ts reads it without the session
 * library) and from stores this file writes, never from the commands' own output.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { examplePath, exampleText, scratch } from './support/files.js';
import { parseRaw, type RawEvent } from './support/raw-log.js';
import { dshIn as dsh } from './support/inproc.js';

const { events } = parseRaw(exampleText());
const file = scratch();
const homes: string[] = [];
afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

function home(config?: unknown): NodeJS.ProcessEnv {
  const h = mkdtempSync(join(tmpdir(), 'dsh-query-home-'));
  homes.push(h);
  if (config !== undefined) writeFileSync(join(h, 'config.json'), JSON.stringify(config));
  return { DSH_HOME: h };
}

/** Store sessions made of the example's events (up to `stopBefore`, to leave a turn open). */
async function storeWith(env: NodeJS.ProcessEnv, sessions: { id: string; cwd: string; stopBefore?: number }[]): Promise<string[]> {
  let now = 0;
  const store = new SessionStore({ root: join(env.DSH_HOME!, 'sessions'), clock: () => now });
  const paths: string[] = [];
  for (const s of sessions) {
    const h = await store.create({ cwd: s.cwd, id: s.id });
    for (const e of events) {
      if (s.stopBefore !== undefined && e.seq >= s.stopBefore) break;
      now = e.time;
      const opts: Record<string, unknown> = {};
      if (e.surfaceOp !== undefined) opts.surfaceOp = e.surfaceOp;
      if (e.sourceEventSeqs !== undefined) opts.sourceEventSeqs = e.sourceEventSeqs;
      (h.session.append as (t: string, d: unknown, o?: unknown) => unknown)(e.type, e.data, Object.keys(opts).length ? opts : undefined);
    }
    await h.close();
    paths.push(h.path);
  }
  return paths;
}

const of = (type: string): RawEvent[] => events.filter((e) => e.type === type);
const usages = (): any[] => of('assistant/message').map((m) => m.data.usage);

describe('dsh log turn', () => {
  it('prints every event of the turn as JSON, and its figures', async () => {
    const start = of('turn/start').find((e) => e.data.turn === 2)!;
    const end = of('turn/end').find((e) => e.data.turn === 2)!;
    const r = await dsh(['log', 'turn', '--json', examplePath, '2']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.events.map((e: RawEvent) => e.seq)).toEqual(events.filter((e) => e.seq >= start.seq && e.seq <= end.seq).map((e) => e.seq));
    expect(j.events).toEqual(events.filter((e) => e.seq >= start.seq && e.seq <= end.seq));
    expect(j).toMatchObject({ turn: 2, start: start.seq, end: end.seq, reason: end.data.reason, repaired: false });
    const inTurn = (e: RawEvent): boolean => e.seq > start.seq && e.seq < end.seq;
    expect(j.stats.steps.length).toBe(of('step/start').filter(inTurn).length);
    expect(j.stats.toolCalls).toBe(of('tool/call').filter(inTurn).length);
    expect(j.stats.tokens.output).toBe(
      of('assistant/message')
        .filter(inTurn)
        .reduce((a, m) => a + m.data.usage.outputTokens, 0),
    );
  });

  it('heads the timeline with the end reason and a step table', async () => {
    const r = await dsh(['log', 'turn', examplePath, '1']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^turn 1 of session 5f0c1e2a-7b3d-4c8e-9a61-0d2f4b6c8e10 · seq \d+–\d+ · completed$/);
    const table = lines.findIndex((l) => /^\s+step\s+seqs\s+attempts/.test(l));
    expect(table).toBeGreaterThan(0);
    const start = of('turn/start')[0]!;
    const end = of('turn/end')[0]!;
    const steps = of('step/start').filter((e) => e.seq > start.seq && e.seq < end.seq);
    expect(lines.slice(table + 1, table + 1 + steps.length).map((l) => l.trim().split(/\s+/)[0])).toEqual(
      steps.map((s) => String(s.data.step)),
    );
    expect(r.stdout).toContain(`${start.seq}  turn 1`);
  });

  it('refuses a turn the log does not have, naming the ones it has (exit 2)', async () => {
    const r = await dsh(['log', 'turn', examplePath, '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`dsh: ${examplePath}: the log has no turn 3: its turns are 1…2 [TURN_NOT_FOUND]\n`);
    for (const bad of ['0', 'x', '-1', '1.5']) expect((await dsh(['log', 'turn', examplePath, bad])).code).toBe(2);
  });
});

describe('dsh log call', () => {
  it('reconstructs each round trip from the raw events', async () => {
    for (const c of of('tool/call')) {
      const r = await dsh(['log', 'call', '--json', examplePath, c.data.callId]);
      expect(r.code).toBe(0);
      const [trip] = JSON.parse(r.stdout).roundTrips;
      const result = of('tool/result').find((x) => x.data.message.content[0].toolCallId === c.data.callId)!;
      const issuer = of('assistant/message').find((m) => m.data.message.content.some((b: any) => b.id === c.data.callId))!;
      expect(trip.call.seq).toBe(c.seq);
      expect(trip.result.event.seq).toBe(result.seq);
      expect(trip.issuedBy.message.seq).toBe(issuer.seq);
      expect(trip.timings.durationMs).toBe(result.time - c.time);
      const deltas = events
        .filter((e) => e.type === 'assistant/chunk' && e.data.chunk.type === 'tool-call-delta' && e.data.chunk.id === c.data.callId)
        .map((e) => e.seq);
      for (const d of deltas) expect(trip.issuedBy.chunks).toContain(d);
    }
  });

  it('prints the parts for people', async () => {
    const c = of('tool/call').at(-1)!;
    const r = await dsh(['log', 'call', examplePath, c.data.callId]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`call ${c.data.callId} · ${c.data.name} · turn 2 step 1 · answered`);
    expect(lines.map((l) => l.trim().split(/\s{2,}/)[0])).toEqual([
      'call ' + c.data.callId + ' · ' + c.data.name + ' · turn 2 step 1 · answered',
      'issued by',
      'call',
      'arguments',
      'result',
      'times',
    ]);
    expect(r.stdout).toContain(`#${c.seq} tool/call`);
    expect(r.stdout).toMatch(/error FS_NOT_FOUND/);
  });

  it('on a log whose last turn is open, a call without a result in the file is unanswered (crash repair invents none)', async () => {
    const lines = exampleText().split('\n');
    const c = of('tool/call')[0]!;
    const at = lines.findIndex((l) => l.includes('"tool/call"') && l.includes(JSON.stringify(c.data.callId)));
    const open = file('open-after-call.jsonl', lines.slice(0, at + 1).join('\n') + '\n');
    const r = await dsh(['log', 'call', '--json', open, c.data.callId]);
    expect(r.code).toBe(0);
    const [trip] = JSON.parse(r.stdout).roundTrips;
    expect([trip.state, trip.call.seq, trip.result]).toEqual(['unanswered', c.seq, undefined]);
    const human = await dsh(['log', 'call', open, c.data.callId]);
    expect(human.stdout.split('\n')[0]).toMatch(/ · unanswered$/);
    expect(human.stdout).toMatch(/result +none: unanswered/);
  });

  it('lists the nearest ids for an unknown one (exit 2)', async () => {
    const r = await dsh(['log', 'call', examplePath, 'call_4']);
    expect(r.code).toBe(2);
    const ids = of('tool/call').map((c) => c.data.callId);
    expect(r.stderr).toMatch(/no tool call "call_4" in the log; nearest: call_04_read, /);
    for (const id of ids) expect(r.stderr).toContain(id);
    expect(r.stderr).toMatch(/\[CALL_NOT_FOUND\]\n$/);
  });
});

describe('dsh log trace', () => {
  it('gives what an event cites and what cites it, from the raw sourceEventSeqs', async () => {
    for (const e of events.filter((x) => x.sourceEventSeqs?.length)) {
      const r = await dsh(['log', 'trace', '--json', examplePath, String(e.seq)]);
      const j = JSON.parse(r.stdout);
      expect(j.cites.map((c: { seq: number }) => c.seq)).toEqual(e.sourceEventSeqs);
      const cited = await dsh(['log', 'trace', '--json', examplePath, String(e.sourceEventSeqs![0])]);
      expect(JSON.parse(cited.stdout).citedBy.map((c: { seq: number }) => c.seq)).toEqual(
        events.filter((x) => x.sourceEventSeqs?.includes(e.sourceEventSeqs![0]!)).map((x) => x.seq),
      );
    }
  });

  it('collapses cited chunk runs to one line, and refuses a seq outside the log (exit 2)', async () => {
    const m = of('assistant/message')[0]!;
    const r = await dsh(['log', 'trace', examplePath, String(m.seq)]);
    const s = m.sourceEventSeqs!;
    expect(r.stdout).toContain(`cites        #${s[0]}–${s.at(-1)} assistant/chunk ×${s.length}`);
    const out = await dsh(['log', 'trace', examplePath, String(events.length)]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `dsh: ${examplePath}: seq ${events.length} is outside the log: its seqs are 0…${events.length - 1} [SEQ_OUT_OF_RANGE]\n`,
    );
    expect((await dsh(['log', 'trace', examplePath, '-3'])).code).toBe(2);
    expect((await dsh(['log', 'trace', examplePath, '1e3'])).code).toBe(2);
  });
});

describe('dsh log stats', () => {
  it('calls the model issued but no tool/call dispatched are calls, and unanswered, in a dangling turn', async () => {
    const lines = exampleText().split('\n');
    const issuer = of('assistant/message').find((m) => m.data.message.content.some((b: any) => b.type === 'tool-call'))!;
    const blocks = issuer.data.message.content.filter((b: any) => b.type === 'tool-call');
    const at = lines.findIndex((l) => l.includes('"assistant/message"') && l.includes(`"seq":${issuer.seq},`));
    expect(at).toBeGreaterThan(0);
    const open = file('open-after-issue.jsonl', lines.slice(0, at + 1).join('\n') + '\n');
    const before = of('tool/call').filter((c) => c.seq < issuer.seq);
    const r = await dsh(['log', 'stats', '--json', open]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.toolCalls).toBe(before.length + blocks.length);
    const dangling = j.unanswered.filter((u: any) => u.turn === issuer.data.turn);
    expect(dangling.map((u: any) => [u.callId, u.name, u.seq])).toEqual(blocks.map((b: any) => [b.id, b.name, issuer.seq]));
    const check = await dsh(['log', 'check', '--alerts=unanswered', open]);
    expect(check.code).toBe(1);
    for (const b of blocks) expect(check.stdout + check.stderr).toContain(b.id);
  });

  it('sums the tokens of the raw messages and prices them with the config’s prices', async () => {
    const env = home({ prices: { 'deepseek-chat': { input: 2, cacheRead: 0.5, output: 8 } } });
    const r = await dsh(['log', 'stats', '--json', examplePath], { env });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    const u = usages();
    const sum = (k: string): number => u.reduce((a, x) => a + (x[k] ?? 0), 0);
    expect(j.tokens).toMatchObject({
      calls: u.length,
      input: sum('inputTokens'),
      cacheRead: sum('cacheReadTokens'),
      output: sum('outputTokens'),
      reasoning: sum('reasoningTokens'),
    });
    expect(j.cost.byCurrency.USD).toBeCloseTo((sum('inputTokens') * 2 + sum('cacheReadTokens') * 0.5 + sum('outputTokens') * 8) / 1e6, 12);
    expect(j.reasons).toEqual({ completed: of('turn/end').length });
    expect(j.toolCalls).toBe(of('tool/call').length);
    expect(j.alerts).toEqual([]);
  });

  it('says which calls have no price, and why', async () => {
    const r = await dsh(['log', 'stats', examplePath], { env: home() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}cost {9}- \(no call priced; 6 unpriced\)$/m);
    expect(r.stdout).toMatch(/unpriced +deepseek:deepseek-chat, 6 calls: no price for deepseek:deepseek-chat at 2026-01-15T/);
  });

  it('warns and uses the default prices when the config does not load', async () => {
    const env = home();
    writeFileSync(join(env.DSH_HOME!, 'config.json'), '{"prices": {"m": {"input": "x"}}}');
    const r = await dsh(['log', 'stats', examplePath], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^warning: prices from the config were not read \(.*\$\.prices\.m\.input.*\[CONFIG_INVALID\]\); using the default prices$/m,
    );
  });

  it('over the store: totals, reasons, alerts, per-session rows; --cwd and --since select', async () => {
    const env = home();
    const firstEnd = of('turn/end')[0]!.seq;
    const paths = await storeWith(env, [
      { id: 'aaaaaaaa-0000-4000-8000-000000000001', cwd: '/w/a' },
      { id: 'aaaaaaaa-0000-4000-8000-000000000002', cwd: '/w/b' },
      // Cut inside turn 2, no writer: dangling.
      { id: 'bbbbbbbb-0000-4000-8000-000000000003', cwd: '/w/a', stopBefore: firstEnd + 5 },
    ]);
    const all = JSON.parse((await dsh(['log', 'stats', '--all', '--json'], { env })).stdout);
    expect(all.sessions).toBe(3);
    expect(all.reasons).toEqual({ completed: 2 * 2 + 1, dangling: 1 });
    expect(all.dangling).toEqual([{ sessionId: 'bbbbbbbb-0000-4000-8000-000000000003', turn: 2 }]);
    expect(all.alerts.map((a: { kind: string }) => a.kind)).toEqual(['dangling']);
    expect(all.tokens.output).toBe(
      2 * usages().reduce((a, u) => a + u.outputTokens, 0) +
        events.filter((e) => e.type === 'assistant/message' && e.seq < firstEnd + 5).reduce((a, m) => a + m.data.usage.outputTokens, 0),
    );
    expect(all.perSession.map((r: { id: string }) => r.id).sort()).toEqual([
      'aaaaaaaa-0000-4000-8000-000000000001',
      'aaaaaaaa-0000-4000-8000-000000000002',
      'bbbbbbbb-0000-4000-8000-000000000003',
    ]);
    const a = JSON.parse((await dsh(['log', 'stats', '--cwd', '/w/a', '--json'], { env })).stdout);
    expect(a.sessions).toBe(2);
    // --since: the logs' modification times.
    utimesSync(paths[0]!, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const since = JSON.parse((await dsh(['log', 'stats', '--since', '2026-06-01', '--json'], { env })).stdout);
    expect(since.sessions).toBe(2);
    const human = await dsh(['log', 'stats', '--all'], { env });
    expect(human.stdout.split('\n')[0]).toMatch(/^3 sessions · 6 turns · /);
    expect(human.stdout).toMatch(
      /^ {2}bbbbbbbb\S* +dangling +2 +#\d+ +turn 2 \(seq \d+\) has no turn\/end and no live writer holds the session$/m,
    );
    expect(human.stdout).toMatch(/^ {2}tool +calls +failed +unanswered/m);
  });

  it('an empty store, a missing one, bad selections', async () => {
    const env = home();
    const r = await dsh(['log', 'stats', '--all'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`no stored sessions under ${join(env.DSH_HOME!, 'sessions')}\n`);
    expect(JSON.parse((await dsh(['log', 'stats', '--all', '--json'], { env })).stdout)).toMatchObject({ sessions: 0, failed: [] });
    expect((await dsh(['log', 'stats'], { env })).code).toBe(2);
    expect((await dsh(['log', 'stats', '--all', examplePath], { env })).stderr).toMatch(/not both \[USAGE\]/);
    const bad = await dsh(['log', 'stats', '--since', 'last week'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/option '--since <date>' argument 'last week' is invalid/);
    // Days a month does not have: refused, not read as the first days of the next month (2026-03-02).
    for (const day of ['2026-02-30', '2026-02-29T09:00Z', '2026-04-31', '2026-06-00']) {
      const r = await dsh(['log', 'stats', '--since', day], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`option '--since <date>' argument '${day}' is invalid`));
    }
    // A day the month has, a leap day included, is taken.
    for (const day of ['2028-02-29', '2026-01-31T23:59Z']) expect((await dsh(['log', 'stats', '--since', day], { env })).code).toBe(0);
  });

  it('several logs: the ones that load are summed, the others named (exit 1)', async () => {
    const broken = file('broken.jsonl', '{"type":"session"}\nnot json\n');
    const r = await dsh(['log', 'stats', '--json', examplePath, examplePath, broken], { env: home() });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.sessions).toBe(2);
    expect(j.failed).toEqual([expect.objectContaining({ file: broken, code: 'CORRUPT_LOG' })]);
    expect(r.stderr).toMatch(/broken\.jsonl: not read: .*\[CORRUPT_LOG\]/);
  });
});

describe('dsh log check --alerts', () => {
  it('exits 0 with no alert, 1 when one fires, and reports each', async () => {
    const env = home();
    const firstEnd = of('turn/end')[0]!.seq;
    const [ok, open] = await storeWith(env, [
      { id: 'cccccccc-0000-4000-8000-000000000001', cwd: '/w' },
      { id: 'cccccccc-0000-4000-8000-000000000002', cwd: '/w', stopBefore: firstEnd + 5 },
    ]);
    expect((await dsh(['log', 'check', '--alerts', ok!], { env })).code).toBe(0);
    const r = await dsh(['log', 'check', '--alerts', open!], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `^${open}: alert dangling \\(turn 2, seq \\d+\\): turn 2 \\(seq \\d+\\) has no turn/end and no live writer holds the session$`,
        'm',
      ),
    );
    // Only the kinds asked for fire.
    expect((await dsh(['log', 'check', '--alerts=error,blocked', open!], { env })).code).toBe(0);
    // The whole store, as cron would run it.
    const all = await dsh(['log', 'check', '--alerts', '--all', '--json'], { env });
    expect(all.code).toBe(1);
    const j = JSON.parse(all.stdout);
    expect(j.alerts).toBe(1);
    expect(j.files.map((f: { alerts: unknown[] }) => f.alerts.length).sort()).toEqual([0, 1]);
    // Without --alerts, the same log only warns (crash repair closed the turn in memory).
    expect((await dsh(['log', 'check', open!], { env })).code).toBe(0);
  });

  it('takes `--alerts FILE` as the default kinds and a file, and refuses an unknown kind', async () => {
    const r = await dsh(['log', 'check', '--alerts', examplePath]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ok ·');
    const bad = await dsh(['log', 'check', '--alerts=dangling,eror', examplePath]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /"eror" is not an alert kind; the kinds are error, max-tokens, blocked, dangling, unanswered, aborted, interrupted/,
    );
    expect((await dsh(['log', 'check', '--alerts', 'eror', examplePath])).code).toBe(2);
    // Written with '=', the value is always the kinds, never a log (a kind-like word, a hex word, nothing).
    for (const v of ['max_tokens', 'Error', 'dead', '']) {
      const typo = await dsh(['log', 'check', `--alerts=${v}`, examplePath]);
      expect([v, typo.code]).toEqual([v, 2]);
      expect(typo.stderr).toContain(`${JSON.stringify(v)} is not an alert kind`);
    }
    expect((await dsh(['log', 'check', '--alerts'])).stderr).toMatch(/missing required argument 'file'/);
  });

  it('counts an error turn, and what the log holds is printed escaped', async () => {
    const lines = exampleText().trimEnd().split('\n');
    const endSeq = of('turn/end')[0]!.seq;
    const i = lines.findIndex((l) => l.includes(`"seq":${endSeq},`));
    const o = JSON.parse(lines[i]!);
    o.data.reason = { kind: 'error', error: { message: 'boom \u001b[2J', code: 'RATE\u001b[31m', status: 429 } };
    lines[i] = JSON.stringify(o);
    const p = file('error.jsonl', `${lines.join('\n')}\n`);
    const r = await dsh(['log', 'check', '--alerts', p]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('alert error (turn 1, seq');
    expect(r.stdout).toContain('turn 1 ended error RATE\\e[31m');
    expect(r.stdout).not.toContain('\u001b');
  });
});

describe('help', () => {
  it('documents each command', async () => {
    for (const c of ['turn', 'call', 'trace', 'stats']) {
      const r = await dsh(['log', c, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Examples:/);
    }
    expect((await dsh(['log', 'check', '--help'])).stdout).toMatch(/--alerts \[kinds\]/);
  });
});
