/**
 * Keys typed for something else must not answer an approval (issue 15 second review, N4): the
 * Enter ending a steer that lands just as the question appears, or Enter held to page a long call.
 */
import { describe, expect, it } from 'vitest';
import { APPROVAL_BURST_MS, APPROVAL_GRACE_MS, type ApprovalChoice, ApprovalPrompt } from '../../../src/terminal/chat/approval.js';
import { manualDefer } from './approval-support.js';

const ENTER = '\r';
const PGDN = '\x1b[6~';

function prompt(rows: number, detailRows: number) {
  let t = 0;
  const answers: ApprovalChoice[] = [];
  const d = manualDefer(() => t);
  const p = new ApprovalPrompt(
    { call: 'bash', detail: Array.from({ length: detailRows }, (_, i) => ({ text: `echo step-${i + 1}` })), rule: 'bash(x)' },
    (c) => answers.push(c),
    { color: false, rows: () => rows, now: () => t, defer: d.defer },
  );
  // Time moves on: a key's answer acts once APPROVAL_BURST_MS have passed with no other key.
  return { p, answers, at: (ms: number) => d.advance((t = ms)) };
}

describe('approval question: a grace before the choices take keys', () => {
  it(`a key within ${APPROVAL_GRACE_MS} ms of the choices appearing is dropped; later it answers`, () => {
    const { p, answers, at } = prompt(40, 3);
    at(1000);
    expect(p.render(80).join('\n')).toMatch(/1 {2}allow once/);
    // (More than a burst's gap before the key that answers, so that one is a key of its own.)
    at(1000 + APPROVAL_GRACE_MS - APPROVAL_BURST_MS - 1);
    p.handleInput(ENTER);
    p.handleInput('1');
    expect(answers).toEqual([]);
    at(1000 + APPROVAL_GRACE_MS);
    p.handleInput('1');
    expect(answers).toEqual([]);
    at(1000 + APPROVAL_GRACE_MS + APPROVAL_BURST_MS);
    expect(answers).toEqual([{ outcome: 'allowed-once' }]);
  });

  it('the grace counts from when the choices are first drawn, not from the question', () => {
    const { p, answers, at } = prompt(12, 40);
    at(0);
    p.render(80); // paged: no choices yet
    at(5000);
    for (let i = 0; i < 20; i++) {
      p.handleInput(PGDN);
      p.render(80);
    }
    expect(p.render(80).join('\n')).toMatch(/1 {2}allow once/);
    p.handleInput('1'); // same instant the choices opened
    expect(answers).toEqual([]);
  });

  it('Enter does not page a long call: held down, it can never reach the choices and answer', () => {
    const { p, answers, at } = prompt(12, 40);
    for (let t = 0; t < 10_000; t += 30) {
      at(t);
      p.render(80);
      p.handleInput(ENTER);
    }
    expect(p.render(80).join('\n')).not.toMatch(/allow once/);
    expect(answers).toEqual([]);
  });

  it('no choice is selected at first: Enter alone, however long after, never answers; ↓ then Enter does', () => {
    const { p, answers, at } = prompt(40, 3);
    at(0);
    expect(p.render(80).join('\n')).not.toMatch(/›/);
    for (let t = 0; t < 5000; t += 30) {
      at(t);
      p.handleInput(ENTER);
    }
    expect(answers).toEqual([]);
    p.handleInput('\x1b[A'); // ↑ from nothing: the last choice (deny)
    expect(p.render(80).join('\n')).toMatch(/› 3 {2}deny/);
    at(6000);
    p.handleInput('\x1b[B'); // ↓ wraps to allow once
    at(7000);
    p.handleInput(ENTER);
    at(8000);
    expect(answers).toEqual([{ outcome: 'allowed-once' }]);
  });

  it('an MCP tool (a rule without a pattern) says the choice allows every call of the tool', () => {
    const p = new ApprovalPrompt({ call: 'srv__write_file', detail: [], rule: 'srv__write_file' }, () => {}, { color: false });
    expect(p.render(80).join('\n')).toMatch(/2 {2}allow every call of srv__write_file for this session/);
  });
});
