// @ts-check
// Drawing rows: turns, steps and items (the API's `Item` kinds). Log strings only ever reach the
// DOM through `h`/`txt` (text nodes) and `title` attributes (attribute text).
import { button, clear, h, txt } from './dom.js';
import { duration, messageUsage, num, plural, short, usageParts, usageTitle } from './format.js';
/** @import { BlockView, EndReason, Item, Kid, OutsideView, SourceView, StepView, StreamView, Text, TurnView, Usage } from './types.js' */
/** @typedef {(() => void) | null | undefined} OnFull asks for a cut text in full; none where it cannot be had */

/** @type {Record<string, string>} */
const END_TONE = { completed: 'ok', error: 'error', interrupted: 'error', aborted: 'warn', blocked: 'warn', 'max-tokens': 'warn' };

/**
 * @param {number} a
 * @param {number | undefined} b
 */
function seqRange(a, b) {
  return b !== undefined && b !== a ? '#' + a + '–' + b : '#' + a;
}

/**
 * A block taller than its box (pre is capped at 22em and scrolls) says so: a note under it with
 * how much is hidden and a button that shows it all. Run once a row is in the page (only then can
 * heights be read).
 * @param {HTMLElement} el
 */
export function markClipped(el) {
  for (const pre of el.querySelectorAll('pre')) {
    if (pre.classList.contains('clipped') || pre.scrollHeight <= pre.clientHeight + 1) continue;
    pre.classList.add('clipped');
    const hidden = Math.max(1, Math.round((1 - pre.clientHeight / pre.scrollHeight) * 100));
    const note = h('div', 'cut clip-note', 'continues below (' + hidden + '% hidden; scroll inside the block) ');
    note.append(
      button('expand the block', 'link', () => {
        pre.classList.add('full');
        note.remove();
      }),
    );
    pre.after(note);
  }
}

/**
 * @param {boolean | undefined} open
 */
function twisty(open) {
  return h('span', 'twisty', open ? '▾' : '▸');
}

/**
 * @param {string} text
 * @param {string | null | undefined} tone
 */
function badge(text, tone) {
  return h('span', 'badge ' + (tone || ''), text);
}

/**
 * @param {EndReason | undefined} reason
 * @param {boolean} [open]
 */
export function endBadge(reason, open) {
  if (!reason) return badge(open ? 'open' : 'no end', 'live');
  return badge(reason.kind + (reason.detail ? ' ' + reason.detail : ''), END_TONE[reason.kind] || 'warn');
}

/**
 * @param {Usage | undefined} u
 */
function usage(u) {
  if (!u?.messages) return null;
  const s = h('span', 'usage', usageParts(u));
  s.title = usageTitle(u);
  return s;
}

// Laying out megabytes of text in one element takes a browser seconds per pass (far worse for
// one long unbroken word), so a long text is shown a window at a time.
const WINDOW = 65536;

/**
 * A possibly cut string: its text, and what was left out with a way to get it all.
 * @param {Text} t
 * @param {string} cls
 * @param {OnFull} onFull
 */
function textBlock(t, cls, onFull) {
  const wrap = h('div', 'text-wrap');
  const pre = h('pre', cls || 'text');
  wrap.append(pre);
  if (t.text.length <= WINDOW) {
    pre.append(txt(t.text));
  } else {
    const nav = h('div', 'cut window');
    let at = 0;
    const show = () => {
      clear(pre);
      pre.append(txt(t.text.slice(at, at + WINDOW)));
      pre.scrollTop = 0;
      clear(nav);
      nav.append(
        'characters ' + num(at + 1) + '–' + num(Math.min(at + WINDOW, t.text.length)) + ' of ' + num(t.text.length) + ' ',
        at > 0 ? button('‹ previous', 'link', () => ((at -= WINDOW), show())) : '',
        at + WINDOW < t.text.length ? button('next ›', 'link', () => ((at += WINDOW), show())) : '',
      );
    };
    show();
    wrap.append(nav);
  }
  if (t.total !== undefined) {
    wrap.append(
      h(
        'div',
        'cut',
        '… showing ' + num(t.text.length) + ' of ' + num(t.total) + ' characters ',
        onFull ? button('show all', 'link', onFull) : null,
      ),
    );
  }
  return wrap;
}

/**
 * @param {BlockView[]} list
 * @param {OnFull} onFull
 * @returns {HTMLElement[]}
 */
export function blocks(list, onFull) {
  return list.map((b) => block(b, onFull));
}

/**
 * @param {BlockView} b
 * @param {OnFull} onFull
 * @returns {HTMLElement}
 */
function block(b, onFull) {
  switch (b.type) {
    case 'text':
      return textBlock(b.text, 'text', onFull);
    case 'reasoning': {
      const d = h('details', 'reasoning', h('summary', null, 'reasoning (' + num(b.text.total ?? b.text.text.length) + ' chars)'));
      d.append(textBlock(b.text, 'text dim', onFull));
      return d;
    }
    case 'tool-call': {
      const d = h(
        'details',
        'call-block',
        h('summary', null, '→ tool call ', h('span', 'name', b.name), ' ', h('span', 'dim', '[' + b.id + ']')),
      );
      d.append(textBlock(b.args, 'code', onFull));
      return d;
    }
    case 'tool-result':
      return h(
        'div',
        'result-block',
        h('div', 'line', 'tool result ', h('span', 'dim', '[' + b.callId + ']'), b.isError ? badge('error', 'error') : null),
        blocks(b.content, onFull),
      );
    case 'image':
      return h('div', 'line dim', 'image ' + b.ref);
    default:
      return textBlock(b.json, 'code dim', onFull);
  }
}

/**
 * @param {SourceView} s
 */
function sourceLabel(s) {
  if (s.kind === 'user') return 'user';
  if (s.kind === 'plugin') return 'plugin ' + (s.name ?? '?') + (s.form ? ' · ' + s.form : '');
  if (s.kind === 'model') return s.name ?? 'model';
  if (s.kind === 'tool') return 'tool ' + (s.name ?? '');
  return s.kind;
}

export { sourceLabel };

/**
 * @param {StreamView} s
 */
function streamLine(s) {
  const parts = [];
  const d = Object.entries(s.deltas).map(([k, n]) => k + ' ×' + num(n));
  if (d.length) parts.push(d.join(', '));
  if (s.blocks) parts.push(plural(s.blocks, 'block'));
  if (s.usage) parts.push('usage');
  if (s.other) for (const [k, n] of Object.entries(s.other)) parts.push(k + ' ×' + n);
  if (s.finish) parts.push('finish ' + s.finish);
  return 'stream: ' + parts.join(' · ') + '  [' + plural(s.chunks, 'chunk') + ', ' + seqRange(s.first, s.last) + ']';
}

/**
 * @param {string} label
 * @param {Kid[]} rest
 */
function head(label, ...rest) {
  return h('div', 'line', h('span', 'label', label), ' ', ...rest);
}

// Class names never come from the log: a status outside this set gets a neutral class.
const TODO_STATES = new Set(['pending', 'in_progress', 'completed']);

/** @type {Record<string, string | null>} */
const ITEM_TONE = { retry: 'warn', 'retry-started': 'warn', 'turn-end': null };

/**
 * The body of an item row (without the seq gutter).
 * @param {Item} item
 * @param {OnFull} onFull
 * @returns {Kid[]}
 */
export function itemBody(item, onFull) {
  switch (item.kind) {
    case 'user':
      return [
        head(item.source.kind === 'user' ? 'user' : 'user · ' + sourceLabel(item.source), replaced(item)),
        blocks(item.blocks, onFull),
      ];
    case 'assistant': {
      const flags = [];
      if (item.interrupted) flags.push(badge('interrupted', 'warn'));
      if (item.empty) flags.push(badge('empty: not in history', 'dim'));
      /** @type {Kid[]} */
      const out = [
        head(
          'assistant',
          h('span', 'dim', item.source.name ?? ''),
          item.usage ? h('span', 'usage', ' · ' + messageUsage(item.usage)) : null,
          ' ',
          flags,
          replaced(item),
        ),
      ];
      if (item.stream)
        out.push(
          h('div', 'line dim stream', streamLine(item.stream), item.stream.finishMessage ? ': ' + item.stream.finishMessage.text : ''),
        );
      out.push(blocks(item.blocks, onFull));
      return out;
    }
    case 'stream': {
      const s = item.stream;
      const failed = s.finish && /^(error|aborted)/.test(s.finish);
      return [h('div', 'line ' + (failed ? 'error' : 'dim'), streamLine(s), s.finishMessage ? ': ' + s.finishMessage.text : '')];
    }
    case 'tool': {
      const r = item.result;
      const status = r
        ? badge(r.status === 'ok' ? 'ok' : 'error' + (r.code ? ' ' + r.code : ''), r.status === 'ok' ? 'ok' : 'error')
        : badge('no result yet', 'live');
      const out = [
        head(
          'tool',
          h('span', 'name', item.name),
          ' ',
          h('span', 'dim', '[' + item.callId + ']'),
          ' ',
          status,
          r ? h('span', 'dim', ' ' + duration(r.durationMs) + ' · result #' + r.seq) : null,
        ),
      ];
      out.push(h('div', 'args', textBlock(item.args, 'code', onFull)));
      if (r) out.push(h('div', 'tool-result ' + r.status, blocks(r.content, onFull)));
      return out;
    }
    case 'result':
      return [
        head(
          'tool result',
          h('span', 'dim', '[' + item.callId + ']'),
          ' ',
          badge(item.status + (item.code ? ' ' + item.code : ''), item.status === 'ok' ? 'ok' : 'error'),
          replaced(item),
        ),
        h('div', 'tool-result ' + item.status, blocks(item.content, onFull)),
      ];
    case 'header': {
      /** @type {HTMLElement[]} */
      const out = [
        head(
          'request header',
          h('span', 'name', item.provider + '/' + item.model),
          ' ',
          h('span', 'dim', '(' + item.reason + ')'),
          item.details.length ? ' · ' + item.details.join(' · ') : '',
          item.changed.length ? badge('changed: ' + item.changed.join(', '), 'warn') : null,
        ),
      ];
      if (item.toolCount)
        out.push(
          h(
            'div',
            'line dim',
            plural(item.toolCount, 'tool') + ': ' + item.tools.join(', ') + (item.toolCount > item.tools.length ? ', …' : ''),
          ),
        );
      if (item.system) {
        const d = h('details', 'system', h('summary', null, 'system prompt'));
        d.append(textBlock(item.system, 'text', onFull));
        out.push(d);
      }
      return out;
    }
    case 'context':
      return [
        h(
          'div',
          'line dim',
          'request context ' + item.provider + '/' + item.model + (item.window !== undefined ? ' · window ' + num(item.window) : ''),
        ),
      ];
    case 'retry':
      return [
        head(
          'llm retry ' + item.retry,
          '(' + item.mode + ') in ' + duration(item.delayMs) + ' after ' + item.failure + (item.message ? ': ' + item.message.text : ''),
        ),
      ];
    case 'retry-started':
      return [head('llm retry ' + item.retry + ' started')];
    case 'inbox':
      return [
        h(
          'div',
          'line dim',
          'inbox ' +
            item.target +
            ' @' +
            item.at +
            ':' +
            (item.removed ? ' −' + item.removed : '') +
            (item.inserted ? ' +' + item.inserted : '') +
            (!item.removed && !item.inserted ? ' no change' : '') +
            (item.outcome ? ' (' + item.outcome + ')' : ''),
          item.preview
            ? h(
                'span',
                'quote',
                ' “' + item.preview.text.slice(0, 200) + (item.preview.text.length > 200 || item.preview.total ? '…' : '') + '”',
              )
            : null,
        ),
      ];
    case 'todo':
      return [
        head('todo', plural(item.todos.length, 'item')),
        h(
          'ul',
          'todos',
          item.todos.map((t) =>
            h('li', 'todo ' + (TODO_STATES.has(t.status) ? t.status : 'other'), '[' + t.status + '] ' + t.content.text),
          ),
        ),
      ];
    case 'turn-end':
      return [
        head(
          'turn ' + item.turn + ' end',
          endBadge(item.reason),
          item.reason.message ? h('span', 'error-text', ' ' + item.reason.message.text) : null,
        ),
      ];
    case 'seed-end':
      return [
        h(
          'div',
          'line dim',
          item.from === 'fork'
            ? 'end of seed: the ' + plural(item.inherited, 'event') + ' above were inherited from session ' + item.parent
            : 'resumed here: the ' + plural(item.inherited, 'event') + ' above are this session’s earlier run',
        ),
      ];
    case 'event':
      return [
        h(
          'div',
          'line dim',
          h('span', 'label', item.type),
          item.ignorable ? ' (ignorable) ' : ' ',
          h('span', 'code-inline', item.payload.text + (item.payload.total ? '…' : '')),
        ),
      ];
    default:
      // A kind this page does not know (a newer server): shown by name.
      return [h('div', 'line dim', /** @type {{ kind: string }} */ (item).kind)];
  }
}

/**
 * @param {Item} item
 */
function replaced(item) {
  return item.replaces
    ? badge('replaces #' + item.replaces[0] + (item.replaces[1] !== item.replaces[0] ? '–' + item.replaces[1] : ''), 'warn')
    : null;
}

/**
 * @param {Item} item
 */
export function itemTone(item) {
  if (item.kind === 'turn-end') return END_TONE[item.reason.kind] || 'warn';
  if (item.kind === 'tool') return item.result && item.result.status === 'error' ? 'error' : null;
  if (item.kind === 'result') return item.status === 'error' ? 'error' : null;
  if (item.kind === 'stream' && item.stream.finish && /^(error|aborted)/.test(item.stream.finish)) return 'error';
  if (item.kind === 'event' && item.tone) return item.tone;
  return ITEM_TONE[item.kind] ?? null;
}

/**
 * @param {TurnView} t
 * @param {boolean} open
 */
export function turnHead(t, open) {
  const facts = [plural(t.steps, 'step')];
  if (t.toolCalls) facts.push(plural(t.toolCalls, 'tool call') + (t.toolErrors ? ' (' + t.toolErrors + ' failed)' : ''));
  if (t.retries) facts.push(plural(t.retries, 'retry').replace('retrys', 'retries'));
  return [
    twisty(open),
    h('span', 'turn-name', 'Turn ' + t.turn),
    h('span', 'prompt', t.prompt ? t.prompt.text : ''),
    h('span', 'facts', facts.join(' · ')),
    usage(t.usage),
    h('span', 'dur', duration(t.durationMs)),
    endBadge(t.reason, t.end === undefined),
    h('span', 'seqs', seqRange(t.start, t.end)),
  ];
}

/**
 * @param {StepView} s
 * @param {boolean} open
 */
export function stepHead(s, open) {
  const facts = [];
  if (s.toolCalls) facts.push(plural(s.toolCalls, 'tool call') + (s.toolErrors ? ' (' + s.toolErrors + ' failed)' : ''));
  if (s.retries) facts.push(s.retries === 1 ? '1 retry' : s.retries + ' retries');
  facts.push(short(s.chunks) + ' chunks');
  return [
    twisty(open),
    h('span', 'step-name', 'Step ' + s.step),
    h('span', 'facts', facts.join(' · ')),
    usage(s.usage),
    h('span', 'dur', duration(s.durationMs)),
    s.finish
      ? badge('finish ' + s.finish, /^(error|aborted)/.test(s.finish) ? 'error' : s.finish === 'max-tokens' ? 'warn' : 'dim')
      : s.end === undefined
        ? badge('open', 'live')
        : null,
    h('span', 'seqs', seqRange(s.start, s.end)),
  ];
}

/**
 * @param {OutsideView} o
 * @param {boolean} open
 */
export function outsideHead(o, open) {
  return [twisty(open), h('span', 'step-name', plural(o.events, 'event') + ' outside turns'), h('span', 'seqs', seqRange(o.start, o.end))];
}
