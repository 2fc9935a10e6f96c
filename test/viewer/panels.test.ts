/**
 * The inspector (issue 14 item 4): a tool call's round trip, an event's provenance, the session's
 * statistics and edits/writes as diffs, through api/call, api/provenance, api/stats (the query
 * layer run on the server) and in a real headless Chromium. Expected values come from the log as
 * written (the seqs the writer returned, the texts it was given), never from the viewer's code.
 * Tool output and arguments are hostile markup: it must stay text.
 */
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editDiffs } from '../../src/viewer/model/inspect.js';
import { describeBrowser, launchBrowser, openViewer, watchErrors, type Browser } from './support/browser.js';
import { json, parts, raw } from './support/http.js';
import { LogWriter } from './support/logs.js';
import { serveLog } from './support/serve.js';

const IMG = (n: number): string => `<img src=x onerror="window.__pwned = ${n}">`;
const EDIT_ARGS = JSON.stringify({
  file_path: `src/a${IMG(1)}.ts`,
  old_string: 'const a = 1;\nkeep();\n',
  new_string: `const a = 2;\nkeep();\n`,
});
const WRITE_ARGS = JSON.stringify({ file_path: 'notes.md', content: `line one\n${IMG(2)}\n` });
const READ_RESULT = `file text ${IMG(3)} <script>window.__pwned = 4</script>`;

const seqs = { message: 0, editCall: 0, editResult: 0, writeCall: 0, readCall: 0, readResult: 0, turn2: 0, openCall: 0 };

function panelLog(): string {
  const w = new LogWriter('panels');
  w.beginTurn('change a.ts');
  w.header('test-1');
  w.respond('editing', [
    { id: 'c-edit', name: 'edit', args: EDIT_ARGS },
    { id: 'c-write', name: 'write', args: WRITE_ARGS },
  ]);
  seqs.message = w.session.length - 1;
  seqs.editCall = w.call('c-edit', 'edit', EDIT_ARGS);
  w.result(seqs.editCall, 'c-edit', 'edited');
  seqs.editResult = w.session.length - 1;
  seqs.writeCall = w.call('c-write', 'write', WRITE_ARGS);
  w.result(seqs.writeCall, 'c-write', 'written');
  w.endStep();
  w.beginStep();
  w.respond('reading', [{ id: 'c-read', name: 'read', args: '{"file_path":"x"}' }]);
  seqs.readCall = w.call('c-read', 'read', '{"file_path":"x"}');
  w.result(seqs.readCall, 'c-read', READ_RESULT, `BAD${IMG(5)}`);
  seqs.readResult = w.session.length - 1;
  w.endStep();
  w.endTurn({ kind: 'error', error: { code: 'E_TEST', message: `broke ${IMG(6)}` } });
  // A second turn its writer left open: a call with no result (dangling turn, unanswered call).
  w.beginTurn('again');
  seqs.turn2 = w.session.length - 3;
  w.header('test-1');
  w.respond('', [{ id: 'c-open', name: 'bash', args: '{"command":"sleep 100"}' }]);
  seqs.openCall = w.call('c-open', 'bash', '{"command":"sleep 100"}');
  return w.text();
}

const served = serveLog('panels', panelLog);

describe('api/call', () => {
  it("answers a call's round trip from the query layer: message, call, result, timings, diffs", async () => {
    const b = await json(served.viewer.url, 'call', { id: 'c-edit' });
    expect(b.total).toBe(1);
    const t = b.trips[0];
    expect(t.state).toBe('answered');
    expect(t.issuedBy.message.seq).toBe(seqs.message);
    expect(t.call.seq).toBe(seqs.editCall);
    expect(t.call.arguments).toBe(EDIT_ARGS);
    expect(t.result.event.seq).toBe(seqs.editResult);
    expect(t.timings.durationMs).toBeGreaterThan(0);
    expect(t.diffs).toHaveLength(1);
    expect(t.diffs[0].path).toBe(`src/a${IMG(1)}.ts`);
    expect(t.diffs[0].hunks[0].lines).toEqual(['-const a = 1;', '+const a = 2;', ' keep();']);
  });

  it('gives a write as all added lines, and no diff for other tools', async () => {
    const w = await json(served.viewer.url, 'call', { id: 'c-write' });
    expect(w.trips[0].diffs[0].kind).toBe('write');
    expect(w.trips[0].diffs[0].hunks[0].lines).toEqual(['+line one', `+${IMG(2)}`]);
    const r = await json(served.viewer.url, 'call', { id: 'c-read' });
    expect(r.trips[0].diffs).toEqual([]);
    expect(r.trips[0].result.isError).toBe(true);
  });

  it('says an open call is unanswered', async () => {
    const b = await json(served.viewer.url, 'call', { id: 'c-open' });
    expect(b.trips[0].state).toBe('unanswered');
    expect(b.trips[0].result).toBeUndefined();
  });

  it('answers an unknown id 404 with the query code, a missing id 400', async () => {
    const { port, base } = parts(served.viewer.url);
    const r = await raw(port, `${base}api/call?id=nope`);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error.message).toMatch(/^CALL_NOT_FOUND/);
    expect((await raw(port, `${base}api/call`)).status).toBe(400);
    expect((await raw(port, `${base}api/call?id=${'x'.repeat(501)}`)).status).toBe(400);
  });
});

describe('api/provenance', () => {
  it('a result cites its call, and the call is cited by it', async () => {
    const p = await json(served.viewer.url, 'provenance', { seq: seqs.editResult });
    expect(p.event.seq).toBe(seqs.editResult);
    expect(p.cites.map((r: { seq: number }) => r.seq)).toEqual([seqs.editCall]);
    const c = await json(served.viewer.url, 'provenance', { seq: seqs.editCall });
    expect(c.citedBy.map((r: { seq: number }) => r.seq)).toEqual([seqs.editResult]);
    expect(c.related.some((r: { seq: number; relation: string }) => r.seq === seqs.message && r.relation === 'issued-by')).toBe(true);
  });

  it('refuses a seq out of range (404) and a bad one (400)', async () => {
    const { port, base } = parts(served.viewer.url);
    expect((await raw(port, `${base}api/provenance?seq=999999`)).status).toBe(404);
    expect((await raw(port, `${base}api/provenance?seq=-1`)).status).toBe(400);
  });
});

describe('api/stats', () => {
  it('gives reasons, alerts (error, dangling, unanswered), tokens and tools', async () => {
    const b = await json(served.viewer.url, 'stats');
    expect(b.stats.turns).toBe(2);
    expect(b.stats.reasons).toEqual({ error: 1, dangling: 1 });
    expect(b.stats.perTurn).toBeUndefined();
    const kinds = b.alerts.map((a: { kind: string }) => a.kind).sort();
    expect(kinds).toEqual(['dangling', 'error', 'unanswered']);
    expect(b.alerts.find((a: { kind: string }) => a.kind === 'unanswered').seq).toBe(seqs.openCall);
    // Three provider calls of 100 input / 10 output tokens each (the writer's usage).
    expect(b.stats.tokens.output).toBe(30);
    expect(b.stats.tools.map((t: { name: string }) => t.name).sort()).toEqual(['bash', 'edit', 'read', 'write']);
  });
});

describe('editDiffs', () => {
  it('reads Claude Code MultiEdit, ignores bad JSON, arrays and other tools, and refuses huge texts', () => {
    const multi = JSON.stringify({
      file_path: 'f',
      edits: [{ old_string: 'a\n', new_string: 'b\n' }, { old_string: 'c\n', new_string: 'd\n' }, 5],
    });
    expect(editDiffs('MultiEdit', multi).map((d) => d.hunks[0]!.lines)).toEqual([
      ['-a', '+b'],
      ['-c', '+d'],
    ]);
    expect(editDiffs('edit', '{not json')).toEqual([]);
    expect(editDiffs('edit', '[1]')).toEqual([]);
    expect(editDiffs('bash', EDIT_ARGS)).toEqual([]);
    expect(editDiffs('write', JSON.stringify({ path: 'p', content: 'x'.repeat(300_000) }))[0]!.tooLarge).toBe(true);
  });
});

describeBrowser('the inspector panels', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const dialogs: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    errors = watchErrors(page);
    page.on('dialog', (d: Dialog) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await openViewer(page, served.viewer.url);
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function jump(seq: number): Promise<void> {
    await page.fill('#jump', String(seq));
    await page.press('#jump', 'Enter');
    await page.waitForSelector(`#rows .item[data-seq="${seq}"]`);
  }

  async function panelReady(kind: string): Promise<void> {
    await page.waitForSelector(`#inspect[data-panel="${kind}"][data-state="ready"]`);
  }

  const text = (sel: string): Promise<string> =>
    page
      .locator(sel)
      .textContent()
      .then((t) => t ?? '');

  it("clicking a tool call's round-trip button shows callOf's answer, the edit as a diff, all as text", async () => {
    await jump(seqs.editCall);
    await page.click(`#rows .item[data-seq="${seqs.editCall}"] .act-call`);
    await panelReady('call');
    const body = await text('#inspect-body');
    expect(body).toContain('answered');
    expect(body).toContain(`#${seqs.message}`);
    expect(await page.locator('#inspect .diff .dl.del').allTextContents()).toEqual(['-const a = 1;']);
    expect(await page.locator('#inspect .diff .dl.add').allTextContents()).toEqual(['+const a = 2;']);
    expect(body).toContain(`src/a${IMG(1)}.ts`);
  });

  it("clicking a tool call's result (shown in the call's row) shows the round trip; its hostile error code stays text", async () => {
    await jump(seqs.readCall);
    await page.click(`#rows .item[data-seq="${seqs.readCall}"] .tool-result`);
    await panelReady('call');
    expect(await text('#inspect-title')).toBe('Tool call c-read');
    expect(await text('#inspect-body')).toContain(`error BAD${IMG(5)}`);
  });

  it('shows provenance with seq links that jump to the row', async () => {
    await jump(seqs.editCall);
    await page.click(`#rows .item[data-seq="${seqs.editCall}"] .act-prov`);
    await panelReady('provenance');
    const citedBy = page.locator('#inspect .group[data-group="cited by"] .seq-link');
    expect(await citedBy.allTextContents()).toEqual([`#${seqs.editResult}`]);
    const issuedBy = page.locator('#inspect .group[data-group="related"] .seq-link');
    expect(await issuedBy.allTextContents()).toEqual([`#${seqs.message}`]);
    await issuedBy.first().click();
    // The message's row starts at its first chunk: the row selected is the one holding the message.
    await page.waitForSelector('#rows .row.selected .item[data-item="assistant"]');
    expect(await text('#rows .row.selected .item[data-item="assistant"]')).toContain('editing');
  });

  it('shows the stats panel: reasons, alerts with links, tokens, tools', async () => {
    await page.click('#stats-toggle');
    await panelReady('stats');
    const alerts = await page.locator('#inspect .alert').evaluateAll((els) => els.map((e: any) => e.dataset.kind));
    expect(alerts.sort()).toEqual(['dangling', 'error', 'unanswered']);
    expect(await text('#inspect .group[data-group="reasons"]')).toMatch(/dangling 1[\s\S]*error 1|error 1[\s\S]*dangling 1/);
    expect(await text('#inspect .group[data-group="tokens"]')).toContain('output 30');
    // The writer's provider and model have no price: named as recorded, `provider:model` (the page
    // read a `provider` field no answer has and showed `?/test:test-1` until the answer was typed).
    expect(await text('#inspect .group[data-group="tokens"]')).toContain('unpriced: test:test-1 (3 calls)');
    expect(await page.locator('#inspect .group[data-group="tools"] .line').count()).toBe(4);
    await page.click(`#inspect .alert[data-kind="unanswered"] .seq-link`);
    await page.waitForSelector(`#rows .row.selected .item[data-seq="${seqs.openCall}"]`);
  });

  it('ran no script from the log and raised no error', async () => {
    await page.click('#stats-toggle');
    await panelReady('stats');
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    expect(await page.locator('#inspect img, #inspect script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });
});
