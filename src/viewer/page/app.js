// @ts-check
// The page: session header, toolbar (search, jump to seq, model view), the timeline and the
// model-view panel; keyboard navigation; live updates from the server's event stream.
import { api } from './api.js';
import { clear, h, setHighlight, visible } from './dom.js';
import { num, plural, time, usageParts, usageTitle } from './format.js';
import { Inspector } from './inspect.js';
import { ModelView } from './model.js';
import { Timeline } from './timeline.js';
import { VirtualList } from './vlist.js';
/** @import { Item, Row, SearchMatch, SessionView } from './types.js' */

// Every id looked up below is in index.html.
/** @type {(id: string) => HTMLElement} */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @type {(id: string) => HTMLInputElement} */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/**
 * A failure on the status line: an ApiError's code and message, or whatever else was thrown.
 * @param {unknown} e
 */
function showError(e) {
  const s = $('status');
  clear(s);
  s.className = 'status error';
  const x = /** @type {{ code?: unknown, message?: unknown } | null | undefined} */ (e);
  s.append(h('span', null, (x?.code ? x.code + ': ' : '') + (x?.message ? x.message : String(e))));
}

/** @type {VirtualList<Row>} */
const list = new VirtualList({
  scroller: $('timeline'),
  top: $('spacer-top'),
  rows: $('rows'),
  bottom: $('spacer-bottom'),
  render: () => h('div'),
  estimate: () => 40,
});
const timeline = new Timeline(list, { onSelect, onError: showError, onInspect });
const inspector = new Inspector({
  panel: $('inspect'),
  title: $('inspect-title'),
  body: $('inspect-body'),
  close: $('inspect-close'),
  goTo: (seq) => void timeline.goToSeq(seq).catch(showError),
  onError: showError,
});

/**
 * A row's inspector button: a tool call's round trip, or an event's provenance.
 * @param {'call' | 'provenance'} kind
 * @param {Item} item
 */
function onInspect(kind, item) {
  if (kind === 'call' && 'callId' in item) void inspector.showCall(item.callId);
  else void inspector.showProvenance(item.seq);
}
const model = new ModelView({
  panel: $('model'),
  seqInput: input('model-seq'),
  info: $('model-info'),
  list: $('model-list'),
  onError: showError,
});
/** @type {SessionView | undefined} */
let session;

/**
 * The seq a row stands for in the model view: the last event it shows.
 * @param {Row} row
 * @returns {number | undefined}
 */
function rowSeq(row) {
  switch (row.kind) {
    case 'item':
      return row.data.last ?? row.data.seq;
    case 'step':
      return row.data.end ?? row.data.start + row.data.events - 1;
    case 'turn':
      return row.data.end ?? row.data.start + row.data.events - 1;
    case 'outside':
      return row.data.end;
    default:
      return undefined;
  }
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let selectTimer;
/** @param {Row} row */
function onSelect(row) {
  if (!model.visible) return;
  clearTimeout(selectTimer);
  const seq = rowSeq(row);
  if (seq !== undefined) selectTimer = setTimeout(() => model.show(seq), 120);
}

// ------------------------------------------------------------------------------------------
// Session header

/** @param {SessionView} s */
function renderSession(s) {
  session = s;
  document.body.dataset.events = String(s.events);
  const label = $('session-label');
  clear(label);
  label.append(h('span', 'mono', s.label));
  label.title = visible(s.label); // a tooltip is text too: a file name can hold a bidi override
  const meta = $('session-meta');
  clear(meta);
  meta.append(h('span', null, 'session ', h('span', 'mono', s.header.id)), ' · created ' + time(s.header.createdAt));
  if (s.header.cwd) meta.append(' · cwd ', h('span', 'mono', s.header.cwd));
  if (s.header.parentSession) meta.append(' · forked from ', h('span', 'mono', s.header.parentSession));
  const facts = $('session-facts');
  clear(facts);
  facts.append(
    h('span', null, plural(s.events, 'event')),
    ' · ',
    h('span', 'turns', plural(s.turns, 'turn')),
    ' · ',
    h('span', null, plural(s.steps, 'step')),
    ' · ',
    h('span', null, plural(s.toolCalls, 'tool call') + (s.toolErrors ? ' (' + s.toolErrors + ' failed)' : '')),
    s.retries ? ' · ' + plural(s.retries, 'retry').replace('retrys', 'retries') : '',
  );
  const usage = h('span', 'usage', usageParts(s.usage));
  usage.title = usageTitle(s.usage);
  facts.append(' · ', usage);
  const st = $('status');
  clear(st);
  if (s.follow.state === 'following') {
    st.className = 'status live';
    st.append(h('span', 'dot'), s.kind === 'file' ? 'following the file' : 'following the session');
  } else {
    st.className = 'status stopped';
    st.append(h('span', null, 'not following' + (s.follow.problem ? ': ' + s.follow.problem.message : '')));
  }
  const w = $('warnings');
  clear(w);
  if (s.warningCount) {
    const d = h('details', 'warnings', h('summary', null, plural(s.warningCount, 'load warning')));
    for (const x of s.warnings) d.append(h('div', 'warning', x.code + (x.line ? ' line ' + x.line : '') + ': ' + x.message));
    w.append(d);
  }
}

// ------------------------------------------------------------------------------------------
// Search

/** @type {{ q: string, matches: SearchMatch[], at: number, more: boolean }} */
const search = { q: '', matches: [], at: -1, more: false };

/** @param {string} q */
async function runSearch(q) {
  const st = $('search-status');
  clear(st);
  if (!q) {
    search.q = '';
    search.matches = [];
    setHighlight('');
    list.redrawAll();
    return;
  }
  try {
    const r = await api('search', { q, limit: 500 });
    search.q = q;
    search.matches = r.matches;
    search.more = r.next !== undefined;
    search.at = -1;
    // Marks only where the search found something: the page also shows text that is in no event
    // (turn names, figures, labels), and a mark there beside "no match" contradicts it.
    setHighlight(r.matches.length === 0 ? '' : q);
    list.redrawAll();
    if (r.matches.length === 0) {
      st.append('no match in the log’s events');
      return;
    }
    await gotoMatch(0);
  } catch (e) {
    showError(e);
  }
}

/** @param {number} k */
async function gotoMatch(k) {
  const n = search.matches.length;
  if (n === 0) return;
  search.at = ((k % n) + n) % n;
  const m = /** @type {SearchMatch} */ (search.matches[search.at]);
  try {
    await timeline.goToSeq(m.seq);
  } catch (e) {
    showError(e);
  }
  // Written once the match is on screen, so "k of n" always describes the selected row.
  const st = $('search-status');
  clear(st);
  st.append(num(search.at + 1) + ' of ' + num(n) + (search.more ? '+' : '') + ' · #' + m.seq + ' ' + m.type);
}

// ------------------------------------------------------------------------------------------
// Controls

function toggleModel(on = $('model').hidden) {
  $('model').hidden = !on;
  $('model-toggle').setAttribute('aria-pressed', String(on));
  document.body.classList.toggle('with-model', on);
  if (on) {
    const i = timeline.selectedIndex();
    const seq = i >= 0 ? rowSeq(list.rows[i]) : undefined;
    model.show(seq ?? (session && session.events > 0 ? session.events - 1 : undefined));
  }
  list.schedule();
}

$('model-toggle').addEventListener('click', () => toggleModel());
$('model-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const v = input('model-seq').value.trim();
  if (/^\d+$/.test(v)) model.show(Number(v));
});
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const q = input('search').value;
  if (q && q === search.q && search.matches.length) gotoMatch(search.at + 1);
  else runSearch(q);
});
$('search-next').addEventListener('click', () => gotoMatch(search.at + 1));
$('search-prev').addEventListener('click', () => gotoMatch(search.at - 1));
$('jump-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const v = input('jump').value.trim();
  if (!/^\d+$/.test(v)) return showError({ code: 'BAD_SEQ', message: 'a seq is a number' });
  try {
    await timeline.goToSeq(Number(v));
  } catch (err) {
    showError(err);
  }
});

$('stats-toggle').addEventListener('click', () => void inspector.showStats());
$('sessions-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const q = input('sessions-q').value.trim();
  if (q) void inspector.showSessions(q);
});
$('rows').addEventListener('click', (e) => {
  const target = /** @type {Element} */ (e.target);
  const rowEl = /** @type {HTMLElement | null} */ (target.closest('.row'));
  if (!rowEl) return;
  // Controls inside a row (buttons, disclosure summaries) do their own thing.
  if (target.closest('button, summary, a, input')) return;
  const i = Number(rowEl.dataset.i);
  timeline.select(i, false);
  // A click on a tool call or its result shows the call's round trip.
  const itemEl = /** @type {HTMLElement | null} */ (target.closest('.item'));
  const row = timeline.list.rows[i];
  if (itemEl && row?.kind === 'item' && (row.data.kind === 'tool' || row.data.kind === 'result')) onInspect('call', row.data);
  if (target.closest('.head')) timeline.toggle(i);
});

/** @param {number} delta */
function move(delta) {
  const i = timeline.selectedIndex();
  const next = i < 0 ? 0 : Math.max(0, Math.min(list.length - 1, i + delta));
  timeline.select(next);
}

document.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement) {
    if (e.key === 'Escape') e.target.blur();
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  // A focused control keeps its own activation keys.
  if ((e.key === 'Enter' || e.key === ' ') && e.target instanceof Element && e.target.closest('button, summary, a')) return;
  const i = timeline.selectedIndex();
  const row = i >= 0 ? list.rows[i] : undefined;
  switch (e.key) {
    case 'j':
    case 'ArrowDown':
      move(1);
      break;
    case 'k':
    case 'ArrowUp':
      move(-1);
      break;
    case 'PageDown':
      move(10);
      break;
    case 'PageUp':
      move(-10);
      break;
    case 'Home':
      timeline.select(0);
      break;
    case 'End':
      timeline.select(list.length - 1);
      break;
    case 'Enter':
    case 'ArrowRight':
    case 'l':
      if (row && (row.kind === 'more' || (timeline.expandable(row) && !('open' in row && row.open)))) timeline.toggle(i);
      else move(1);
      break;
    case 'ArrowLeft':
    case 'h':
      if (row && timeline.expandable(row) && 'open' in row && row.open) timeline.toggle(i);
      else if (row) {
        const p = timeline.parentIndex(i);
        if (p >= 0) timeline.select(p);
      }
      break;
    case '/':
      $('search').focus();
      break;
    case 'g':
      $('jump').focus();
      break;
    case 'm':
      toggleModel();
      break;
    case 's':
      void inspector.showStats();
      break;
    case 'n':
      gotoMatch(search.at + 1);
      break;
    case 'N':
      gotoMatch(search.at - 1);
      break;
    case '?':
      $('help').hidden = !$('help').hidden;
      break;
    default:
      return;
  }
  e.preventDefault();
});

$('help-close').addEventListener('click', () => {
  $('help').hidden = true;
});

// ------------------------------------------------------------------------------------------
// Start, and follow

let growing = Promise.resolve();

async function start() {
  try {
    const s = await api('session');
    renderSession(s);
    timeline.init(s.segments);
    if (s.segments > 0) await timeline.fetchPage(0);
    list.draw();
    // `dsh view … --seq N` (a search hit) opens the page at that seq: #seq=N in the address.
    const at = /^#seq=(\d+)$/.exec(location.hash);
    if (at) await timeline.goToSeq(Number(at[1]));
  } catch (e) {
    showError(e);
  }
  document.body.dataset.ready = '1';
  const es = new EventSource('api/follow');
  es.addEventListener('grow', (ev) => {
    const msg = JSON.parse(ev.data);
    growing = growing
      .then(async () => {
        if (!session) return;
        if (
          msg.events !== session.events ||
          msg.segments !== timeline.total ||
          msg.changed.length ||
          msg.follow.state !== session.follow.state
        ) {
          await timeline.grow(msg);
          renderSession(await api('session'));
          // The open inspector panel describes the log as it was when asked: ask again.
          void inspector.refresh();
        }
      })
      .catch(showError);
  });
}

start();
