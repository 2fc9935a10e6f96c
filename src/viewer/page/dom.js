// Building the page's DOM. Every string from the log goes through `txt`, which makes text nodes
// (and <mark> elements for search hits) — never HTML. Nothing in the page assigns innerHTML, and
// the Content-Security-Policy's Trusted Types rule would make such an assignment throw.

let term = '';

/** Search text to highlight in text rendered from now on ('' for none). */
export function setHighlight(q) {
  term = q.toLowerCase();
}

// Controls and invisible formatting characters are shown as escapes, so a log cannot hide or
// reorder text (bidi overrides) or smuggle terminal sequences past a reader.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u2028\u2029\ufeff]/g;

export function visible(s) {
  return s.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (code === 0x1b) return '\\e';
    if (code === 0x0d) return '\\r';
    if (code < 0x100) return '\\x' + code.toString(16).padStart(2, '0');
    return '\\u' + code.toString(16).padStart(4, '0');
  });
}

/** Text (a Text node, or a fragment with <mark>s around search hits). */
export function txt(s) {
  const v = visible(String(s));
  if (!term) return document.createTextNode(v);
  const lower = v.toLowerCase();
  if (lower.length !== v.length || !lower.includes(term)) return document.createTextNode(v);
  const frag = document.createDocumentFragment();
  let pos = 0;
  for (let at = lower.indexOf(term); at >= 0; at = lower.indexOf(term, pos)) {
    if (at > pos) frag.append(document.createTextNode(v.slice(pos, at)));
    const m = document.createElement('mark');
    m.textContent = v.slice(at, at + term.length);
    frag.append(m);
    pos = at + term.length;
  }
  if (pos < v.length) frag.append(document.createTextNode(v.slice(pos)));
  return frag;
}

/** An element with a class and children (strings become text through `txt`). */
export function h(tag, cls, ...kids) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  add(el, kids);
  return el;
}

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

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
}

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
