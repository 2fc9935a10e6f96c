import { describe, expect, it } from 'vitest';
import { filterItems, Picker, type PickItem } from '../../../src/terminal/chat/picker.js';
import { sessionItem } from '../../../src/cli/chat/resume.js';
import { forkItems } from '../../../src/cli/chat/fork-points.js';

const items: PickItem[] = [
  { value: 'a', title: 'Fix the typo in README', detail: '2h ago · 2 turns' },
  { value: 'b', title: 'Add a test', detail: '5m ago · 1 turn' },
  { value: 'c', title: 'Refactor the Parser', detail: '1d ago · 9 turns' },
];

describe('Picker', () => {
  it('filters by every word typed, case ignored, over title and details', () => {
    expect(filterItems(items, '').map((i) => i.value)).toEqual(['a', 'b', 'c']);
    expect(filterItems(items, 'PARSER').map((i) => i.value)).toEqual(['c']);
    expect(filterItems(items, 'the turns').map((i) => i.value)).toEqual(['a', 'c']);
    expect(filterItems(items, '5m test').map((i) => i.value)).toEqual(['b']);
    expect(filterItems(items, 'nothing-like-it')).toEqual([]);
  });

  it('typing filters, arrows move, Enter picks the entry shown; Escape picks nothing', () => {
    const picked: (string | undefined)[] = [];
    const p = new Picker({ heading: 'Pick', items, color: false }, (v) => picked.push(v));
    p.handleInput('t');
    p.handleInput('h');
    p.handleInput('e');
    p.handleInput('\x1b[B'); // down: the second of "the" matches
    p.handleInput('\r');
    expect(picked).toEqual(['c']);
    p.handleInput('\x7f'); // backspace: "th"
    p.handleInput('\x1b');
    expect(picked).toEqual(['c', undefined]);
  });

  it('draws without escapes when colour is off, with the › marker on the selection, within the width', () => {
    const p = new Picker({ heading: 'Resume a session', items, color: false, visible: 2 }, () => undefined);
    expect(p.render(30)).toEqual([
      'Resume a session',
      'filter: (type to filter)',
      '› Fix the typo in README',
      '    2h ago · 2 turns',
      '  Add a test',
      '    5m ago · 1 turn',
      '1 of 3 · ↑↓ move, Enter picks…',
    ]);
    const colored = new Picker({ heading: 'Resume a session', items, color: true }, () => undefined).render(80);
    expect(colored[2]).toBe('\x1b[1m› \x1b[0m\x1b[7mFix the typo in README\x1b[0m');
  });
});

describe('the lists the chat offers: escaped once, by the picker', () => {
  // A prompt with a title-setting OSC, a right-to-left override and a line break, as a log may hold.
  const hostile = 'first \x1b]0;PWN\x07 then\n\u202eevil';
  const shown = 'first \\e]0;PWN\\x07 then \\u202eevil';

  it('the sessions of --resume and /resume', () => {
    const now = 1_800_000_000_000;
    const item = sessionItem(
      {
        id: 'abcdef0123456789',
        cwd: '/w',
        createdAt: now - 7_200_000,
        modifiedAt: now - 7_200_000,
        bytes: 10,
        path: '/w/x.jsonl',
        turns: 2,
        title: null,
        prompt: hostile,
        parentSession: null,
        forkSeq: null,
        lockedByPid: null,
      },
      now,
    );
    const lines = new Picker({ heading: 'Resume', items: [item], color: false }, () => undefined).render(200);
    expect(lines.slice(2, 4)).toEqual([`› ${shown}`, `    2h ago · 2 turns · /w · abcdef01 · first prompt: ${shown}`]);
  });

  it('the fork points of /fork', () => {
    const items = forkItems([{ seq: 12, turn: 2, prompt: hostile, answer: 'ok \x1b[2J' }]);
    const lines = new Picker({ heading: 'Fork', items, color: false }, () => undefined).render(200);
    expect(lines.slice(2, 4)).toEqual([`› after turn 2 (seq 12): ${shown}`, '    → ok \\e[2J']);
    // Typing filters on the text as written, not on its escapes.
    expect(filterItems(items, 'first then')).toHaveLength(1);
    expect(filterItems(items, 'u202e')).toHaveLength(0);
  });
});
