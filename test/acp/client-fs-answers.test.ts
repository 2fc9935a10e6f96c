/**
 * How dsh takes the editor's answers to `fs/read_text_file`: a turn cancelled while the editor
 * never answers ends (and lets the file go), an editor that gives CRLF files as LF does not get
 * the whole file rewritten to LF by an edit, and an answer without text is a typed FS_IO.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentsClosedAfterEach, EDITOR_FS, harness, results, run, textCall, toolCall, type ClientApp } from './support.js';

const start = agentsClosedAfterEach();

/** The descriptors `pid` holds open on files under `dir`. */
function openUnder(pid: number, dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // Closed meanwhile.
    }
  }
  return out;
}

describe("dsh acp: the editor's answers", { timeout: 90_000 }, () => {
  it('session/cancel ends a turn whose editor read never answers, and the pinned file is closed', async () => {
    const h = harness();
    writeFileSync(join(h.workspace, 'hang.txt'), 'plain hang\n');
    let asked = 0;
    const handlers = (app: ClientApp): ClientApp =>
      app.onRequest('fs/read_text_file', () => {
        asked++;
        return new Promise(() => undefined);
      });
    const agent = start(h, [toolCall('h', 'read', { file_path: 'hang.txt' }), textCall('never')], { handlers });
    await agent.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: EDITOR_FS });
    const { sessionId } = await agent.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
    const prompt = agent.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
    for (let i = 0; i < 300 && asked === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(asked).toBe(1);
    expect(openUnder(agent.proc.pid!, h.workspace)).toEqual([join(h.workspace, 'hang.txt')]);
    await agent.conn.agent.notify('session/cancel', { sessionId });
    const ended = await Promise.race([prompt, new Promise((r) => setTimeout(() => r('still waiting after 20 s'), 20_000))]);
    expect(ended).toMatchObject({ stopReason: 'cancelled' });
    expect(openUnder(agent.proc.pid!, h.workspace)).toEqual([]);
    const got = await results(agent, h.home);
    expect(got.get('h')!.error).toMatchObject({ code: 'ABORTED' });
  });

  it("an edit through an editor that gives CRLF as LF keeps the file's CRLF line ends", async () => {
    const h = harness();
    const ws = (p: string) => join(h.workspace, p);
    writeFileSync(ws('w.txt'), 'one\r\ntwo\r\nthree\r\n');
    writeFileSync(ws('span.txt'), 'a\r\nb\r\nc\r\n');
    writeFileSync(ws('mixed.txt'), 'x\r\ny\nz\r\n');
    const handlers = (app: ClientApp): ClientApp =>
      app.onRequest('fs/read_text_file', ({ params }) => ({ content: readFileSync(params.path, 'utf8').replace(/\r\n/g, '\n') }));
    const script = [
      toolCall('w', 'edit', { file_path: 'w.txt', old_string: 'two', new_string: 'TWO' }),
      // Across a line end: not in the disk's text as written; the edited text gets CRLF back.
      toolCall('span', 'edit', { file_path: 'span.txt', old_string: 'a\nb', new_string: 'A\nB\nB2' }),
      // Mixed: the edit on the disk's text keeps each line's own end.
      toolCall('mixed', 'edit', { file_path: 'mixed.txt', old_string: 'y', new_string: 'Y' }),
      textCall('done'),
    ];
    const agent = start(h, script, { handlers });
    await run(agent, h, EDITOR_FS);
    expect(readFileSync(ws('w.txt'), 'utf8')).toBe('one\r\nTWO\r\nthree\r\n');
    expect(readFileSync(ws('span.txt'), 'utf8')).toBe('A\r\nB\r\nB2\r\nc\r\n');
    expect(readFileSync(ws('mixed.txt'), 'utf8')).toBe('x\r\nY\nz\r\n');
    const got = await results(agent, h.home);
    for (const id of ['w', 'span', 'mixed']) expect(got.get(id)!.isError, id).toBe(false);
  });

  it('an answer without text is FS_IO, not an untyped failure', async () => {
    const h = harness();
    const ws = (p: string) => join(h.workspace, p);
    writeFileSync(ws('empty.txt'), 'plain empty\n');
    writeFileSync(ws('num.txt'), 'plain num\n');
    const handlers = (app: ClientApp): ClientApp =>
      app.onRequest('fs/read_text_file', ({ params }) => (params.path === ws('empty.txt') ? {} : { content: 5 }) as never);
    const script = [
      toolCall('empty', 'read', { file_path: 'empty.txt' }),
      toolCall('num', 'edit', { file_path: 'num.txt', old_string: 'num', new_string: 'n' }),
      textCall('done'),
    ];
    const agent = start(h, script, { handlers });
    await run(agent, h, EDITOR_FS);
    expect(readFileSync(ws('num.txt'), 'utf8')).toBe('plain num\n');
    const got = await results(agent, h.home);
    for (const id of ['empty', 'num']) {
      expect(got.get(id)!.error, id).toMatchObject({ code: 'FS_IO' });
      expect(got.get(id)!.content, id).toContain("the editor's answer has no text");
    }
  });
});
