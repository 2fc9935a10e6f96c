// @ts-check
// Building the page's DOM. Every string from the log goes through `txt`, which makes text nodes
// (and <mark> elements for search hits) — never HTML. Nothing in the page assigns innerHTML, and
// the Content-Security-Policy's Trusted Types rule would make such an assignment throw.

import { escapeUnsafeChar, UNSAFE_RANGES, unsafeEscaper } from './unsafe-chars.js';
/** @import { Kid } from './types.js' */

let term = '';

/**
 * Search text to highlight in text rendered from now on ('' for none).
 * @param {string} q
 */
export function setHighlight(q) {
  term = q.toLowerCase();
}

// Controls and invisible formatting characters are shown as escapes, so a log cannot hide or
// reorder text (bidi overrides) or smuggle terminal sequences past a reader. The table is the
// terminal's too (src/model/unsafe-chars.ts), served by the viewer as unsafe-chars.js with the
// scan the terminal runs over it and the function that writes the escapes. A backslash that
// would start an escape form is escaped too, so `\u202e` typed as text never passes for an
// escaped override.
const PAGE_ESCAPE = unsafeEscaper(UNSAFE_RANGES, escapeUnsafeChar);

/** @param {string} s */
export function visible(s) {
  return PAGE_ESCAPE.escape(s);
}

// A long run without spaces (minified code, base64, a hostile 'AAAA…') is very slow for the
// browser to wrap: seconds for tens of kilobytes. Such runs get a <wbr> break opportunity every
// RUN characters; the text itself (and what a copy gives) is unchanged.
const RUN = 64;
const LONG_RUN = /\S{64,}/g;

/**
 * @param {Node & ParentNode} parent
 * @param {string} text
 */
function appendBreakable(parent, text) {
  LONG_RUN.lastIndex = 0;
  let pos = 0;
  for (let m = LONG_RUN.exec(text); m; m = LONG_RUN.exec(text)) {
    const end = m.index + m[0].length;
    for (let k = m.index + RUN; k < end; k += RUN) {
      parent.append(document.createTextNode(text.slice(pos, k)), document.createElement('wbr'));
      pos = k;
    }
  }
  parent.append(document.createTextNode(text.slice(pos)));
}

/**
 * Text: text nodes, with <mark>s around search hits and <wbr>s in long unbroken runs.
 * @param {unknown} s
 * @returns {Text | DocumentFragment}
 */
export function txt(s) {
  const v = visible(String(s));
  const lower = term ? v.toLowerCase() : '';
  const marks = term && lower.length === v.length && lower.includes(term);
  if (!marks && (v.length < RUN || !/\S{64}/.test(v))) return document.createTextNode(v);
  const frag = document.createDocumentFragment();
  if (!marks) {
    appendBreakable(frag, v);
    return frag;
  }
  let pos = 0;
  for (let at = lower.indexOf(term); at >= 0; at = lower.indexOf(term, pos)) {
    if (at > pos) appendBreakable(frag, v.slice(pos, at));
    const m = document.createElement('mark');
    appendBreakable(m, v.slice(at, at + term.length));
    frag.append(m);
    pos = at + term.length;
  }
  if (pos < v.length) appendBreakable(frag, v.slice(pos));
  return frag;
}

/**
 * An element with a class and children (strings become text through `txt`).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string | null | undefined} [cls]
 * @param {...Kid} kids
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, cls, ...kids) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  add(el, kids);
  return el;
}

/**
 * @param {HTMLElement} el
 * @param {Kid} k
 */
function add(el, k) {
  if (k === null || k === undefined || k === false) return;
  if (Array.isArray(k)) {
    for (const x of k) add(el, x);
  } else if (typeof k === 'string' || typeof k === 'number') {
    el.append(txt(String(k)));
  } else {
    el.append(k);
  }
}

/** @param {Node} el */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
}

/**
 * @param {Kid} label
 * @param {string | null | undefined} cls
 * @param {(e: MouseEvent) => void} onClick
 * @param {string} [title]
 */
export function button(label, cls, onClick, title) {
  const b = h('button', cls, label);
  b.type = 'button';
  if (title) b.title = title;
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    onClick(e);
  });
  return b;
}
