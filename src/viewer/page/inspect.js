// @ts-check
// The inspector panel: a tool call's round trip, an event's provenance and the session's
// statistics, each as the server's query layer answers it (api/call, api/provenance, api/stats;
// see src/viewer/model/inspect.ts). Nothing is computed here but layout; every string from the
// log goes through `h` (text nodes only).
import { api } from './api.js';
import { button, clear, h } from './dom.js';
import { duration, num, plural } from './format.js';
/**
 * @import { ApiAnswers, ApiRoute, CallView, EditDiffView, EventRefView, Kid } from './types.js'
 * @import { ProvenanceView, RoundTripView, SessionsSearchView, StatsView } from './types.js'
 */

/**
 * What the open panel shows: `ask` fetches its answer again and gives it as JSON (to tell a changed
 * answer) and as the panel's content, drawn on demand; `answer` is the JSON last drawn.
 * @typedef {{ ask: () => Promise<{ json: string, draw: () => Kid }>, answer: string }} Panel
 */

export class Inspector {
  /**
   * @param {{ panel: HTMLElement, title: HTMLElement, body: HTMLElement, close: HTMLElement,
   *   goTo: (seq: number) => void, onError: (e: unknown) => void }} opts
   */
  constructor(opts) {
    this.panel = opts.panel;
    this.title = opts.title;
    this.body = opts.body;
    this.goTo = opts.goTo;
    this.onError = opts.onError;
    /** Answers arriving after a newer request are dropped. */
    this.ticket = 0;
    /** @type {Panel | undefined} */
    this.current = undefined;
    /** @type {Promise<void> | undefined} the refresh in flight */
    this.refreshing = undefined;
    this.again = false;
    opts.close.addEventListener('click', () => this.hide());
  }

  hide() {
    this.panel.hidden = true;
    this.ticket++;
    this.current = undefined;
  }

  /**
   * @template {ApiRoute} R
   * @param {string} what panel kind (data-panel, for tests and styles)
   * @param {string} title
   * @param {R} route
   * @param {Record<string, string | number>} params
   * @param {(body: ApiAnswers[R]) => Kid} render
   */
  async open(what, title, route, params, render) {
    const ticket = ++this.ticket;
    /** What the panel shows, kept so that `refresh` can ask again while the log grows. */
    this.current = {
      ask: async () => {
        const body = await api(route, params);
        return { json: JSON.stringify(body), draw: () => render(body) };
      },
      answer: '',
    };
    this.panel.hidden = false;
    this.panel.dataset.panel = what;
    this.panel.dataset.state = 'loading';
    this.panel.dataset.answers = '0';
    clear(this.title);
    this.title.append(title);
    clear(this.body);
    this.body.append(h('div', 'dim', 'loading …'));
    await this.load(ticket, this.current, true);
  }

  /**
   * Ask the server again for what the open panel shows, because the followed log grew (a call's
   * result arrived, a turn ended, the statistics moved). One request at a time: growth during
   * one asks once more after it. An unchanged answer leaves the panel as it is; a changed one is
   * drawn in place, keeping the scroll position and the opened disclosures.
   */
  async refresh() {
    if (this.panel.hidden || !this.current) return;
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        const cur = this.current;
        if (!cur || this.panel.hidden) break;
        // A new ticket: an earlier answer still in flight (the panel's first) is older than this one.
        await this.load(++this.ticket, cur, false);
      } while (this.again);
    })();
    try {
      await this.refreshing;
    } finally {
      this.refreshing = undefined;
    }
  }

  /**
   * @param {number} ticket the request's ticket: answers arriving after a newer `open` are dropped
   * @param {Panel} cur
   * @param {boolean} first the panel's first answer (a refresh draws only a changed one)
   */
  async load(ticket, cur, first) {
    try {
      const { json: answer, draw } = await cur.ask();
      if (ticket !== this.ticket) return;
      if (!first && answer === cur.answer && this.panel.dataset.state === 'ready') return;
      cur.answer = answer;
      const scroll = this.body.scrollTop;
      const opened = [...this.body.querySelectorAll('details')].map((d) => d.open);
      clear(this.body);
      this.body.append(h('div', null, draw()));
      if (!first) {
        this.body.querySelectorAll('details').forEach((d, i) => {
          if (opened[i]) d.open = true;
        });
        this.body.scrollTop = scroll;
      }
      this.panel.dataset.state = 'ready';
      this.panel.dataset.answers = String(Number(this.panel.dataset.answers ?? '0') + 1);
    } catch (e) {
      if (ticket !== this.ticket) return;
      clear(this.body);
      const err = /** @type {{ code?: string, message?: string }} */ (e);
      this.body.append(h('div', 'error', (err.code ? err.code + ': ' : '') + (err.message ?? String(e))));
      this.panel.dataset.state = 'error';
      cur.answer = '';
      this.onError(e);
    }
  }

  /** @param {string} callId */
  showCall(callId) {
    return this.open('call', 'Tool call ' + callId, 'call', { id: callId }, (b) => this.callBody(b));
  }

  /** @param {number} seq */
  showProvenance(seq) {
    return this.open('provenance', 'Provenance of seq ' + seq, 'provenance', { seq }, (b) => this.provenanceBody(b));
  }

  /**
   * Full text across the stored sessions (api/sessions-search). A hit in this session is a link
   * to its row; one in another session names the command that opens it there.
   * @param {string} q
   */
  showSessions(q) {
    return this.open('sessions', 'Sessions matching ' + q, 'sessions-search', { q }, (b) => this.sessionsBody(b));
  }

  /** @param {SessionsSearchView} b */
  sessionsBody(b) {
    if (!b.hits.length) return h('div', 'dim', 'no match in the stored sessions');
    /** @type {Kid[]} */
    const out = [];
    if (b.order !== 'rank')
      out.push(
        h(
          'div',
          'dim',
          b.order === 'rank-newest' ? 'over 5,000 texts match: the best of the newest 5,000' : 'over 5,000 texts match: newest first',
        ),
      );
    for (const hit of b.hits) {
      const where = (hit.turn !== null ? 'turn ' + hit.turn : 'no turn') + ' · ' + hit.kind;
      const m = hit.match;
      const snippet = m
        ? [hit.snippet.slice(0, m[0]), h('mark', null, hit.snippet.slice(m[0], m[1])), hit.snippet.slice(m[1])]
        : [hit.snippet];
      const head = hit.here
        ? [this.seqLink(hit.seq), ' ', h('span', 'dim', 'this session · ' + where)]
        : [
            h('span', 'mono', hit.session),
            h('span', 'dim', ' · ' + where + ' · open with '),
            h('code', null, 'dsh view ' + hit.session + ' --seq ' + hit.seq),
          ];
      const row = h('div', 'hit' + (hit.here ? ' here' : ''), h('div', 'line', head), h('div', 'snippet', snippet));
      row.dataset.seq = String(hit.seq);
      out.push(row);
    }
    return out;
  }

  showStats() {
    return this.open('stats', 'Session statistics', 'stats', {}, (b) => statsBody(b, (seq) => this.seqLink(seq)));
  }

  /**
   * A seq as a link that jumps to its row.
   * @param {number} seq
   * @param {string} [label]
   */
  seqLink(seq, label) {
    const b = button('#' + seq + (label ? ' ' + label : ''), 'link seq-link', () => this.goTo(seq), 'Go to seq ' + seq);
    b.dataset.seq = String(seq);
    return b;
  }

  /**
   * An event reference: its seq (a link), type and place.
   * @param {EventRefView} ref
   */
  ref(ref) {
    const place = ref.turn !== undefined ? ' · turn ' + ref.turn + (ref.step !== undefined ? ' step ' + ref.step : '') : '';
    return h('span', 'ref', this.seqLink(ref.seq), ' ', h('span', 'mono', String(ref.type ?? '')), h('span', 'dim', place));
  }

  /** @param {CallView} b */
  callBody(b) {
    /** @type {Kid[]} */
    const out = [];
    if (b.total > b.trips.length) out.push(h('div', 'dim', 'showing ' + b.trips.length + ' of ' + b.total + ' round trips'));
    else if (b.total > 1) out.push(h('div', 'dim', b.total + ' round trips carry this id (ids repeat across steps)'));
    for (const t of b.trips) out.push(this.trip(t));
    return out;
  }

  /** @param {RoundTripView} t */
  trip(t) {
    const sec = h('section', 'trip');
    sec.dataset.state = t.state;
    sec.append(
      h(
        'div',
        'line',
        h('span', 'name', t.name ?? '(no name)'),
        ' ',
        h('span', 'badge ' + (t.state === 'answered' ? 'ok' : 'warn'), t.state),
        t.turn !== undefined ? h('span', 'dim', ' turn ' + t.turn + (t.step !== undefined ? ' step ' + t.step : '')) : null,
      ),
    );
    /** @type {[string, Kid][]} */
    const rows = [];
    if (t.issuedBy)
      rows.push([
        'issued by',
        [
          this.ref(t.issuedBy.message),
          ' block ' + t.issuedBy.block,
          t.issuedBy.chunks.length ? ' · ' + plural(t.issuedBy.chunks.length, 'chunk') : '',
        ],
      ]);
    if (t.call) rows.push(['tool/call', this.ref(t.call)]);
    for (const hk of t.hooks) {
      const r = hk.result ?? hk.invoked;
      const what = [hk.result?.point ?? hk.invoked?.point, hk.result?.handlerId ?? hk.invoked?.handlerId].filter(Boolean).join(' ');
      rows.push([
        'hook',
        [
          r ? this.ref(r) : '',
          ' ' + what,
          hk.result?.decision ? ' → ' + hk.result.decision : '',
          hk.result?.summary ? ': ' + hk.result.summary : '',
          h('span', 'dim', ' (' + hk.attribution + ')'),
        ],
      ]);
    }
    for (const a of t.approvals)
      rows.push([
        'approval',
        [
          this.ref(a.asked),
          a.asked.reason ? ' ' + a.asked.reason : '',
          a.decided ? [' → ', this.ref(a.decided), ' ', h('b', null, a.decided.outcome ?? '?')] : ' → no decision',
        ],
      ]);
    if (t.result)
      rows.push([
        'tool/result',
        [
          this.ref(t.result.event),
          ' ',
          h(
            'span',
            'badge ' + (t.result.isError ? 'error' : 'ok'),
            t.result.isError ? 'error' + (t.result.error?.code ? ' ' + t.result.error.code : '') : 'ok',
          ),
          t.result.replacedBy.length ? [' · replaced by ', t.result.replacedBy.map((r) => this.ref(r))] : '',
        ],
      ]);
    const tm = t.timings;
    /** @type {string[]} */
    const times = [];
    if (tm.argumentsStreamMs !== undefined) times.push('arguments streamed ' + duration(tm.argumentsStreamMs));
    if (tm.dispatchMs !== undefined) times.push('dispatch ' + duration(tm.dispatchMs));
    if (tm.durationMs !== undefined) times.push('tool ' + duration(tm.durationMs));
    if (tm.totalMs !== undefined) times.push('total ' + duration(tm.totalMs));
    if (times.length) rows.push(['timings', times.join(' · ')]);
    const table = h('div', 'kv');
    for (const [k, v] of rows) table.append(h('div', 'k', k), h('div', 'v', v));
    sec.append(table);
    if (t.diffs.length) for (const d of t.diffs) sec.append(diffEl(d));
    else {
      const args = t.call?.arguments ?? t.issuedBy?.arguments;
      if (args) sec.append(h('details', 'args', h('summary', null, 'arguments'), h('pre', 'code', args)));
    }
    return sec;
  }

  /** @param {ProvenanceView} p */
  provenanceBody(p) {
    /** @type {Kid[]} */
    const out = [h('div', 'line', this.ref(p.event), ' ', h('span', 'badge', p.surface))];
    /**
     * @template {EventRefView} T
     * @param {string} name
     * @param {T[]} refs
     * @param {(r: T) => Kid} [extra]
     */
    const group = (name, refs, extra) => {
      const g = h('div', 'group');
      g.dataset.group = name;
      g.append(h('div', 'label', name + ' (' + refs.length + ')'));
      for (const r of refs) g.append(h('div', 'line', this.ref(r), extra ? extra(r) : null));
      if (!refs.length) g.append(h('div', 'dim', 'none'));
      return g;
    };
    out.push(group('cites', p.cites), group('cited by', p.citedBy), group('replaces', p.replaces));
    out.push(group('replaced by', p.replacedBy ? [p.replacedBy] : []));
    const via = (/** @type {{ depth: number, via: number }} */ r) => h('span', 'dim', ' depth ' + r.depth + ' via #' + r.via);
    out.push(group('chain back', p.chainBack, via), group('chain forward', p.chainForward, via));
    out.push(group('related', p.related, (r) => h('span', 'dim', ' ' + r.relation)));
    return out;
  }
}

/**
 * A diff as lines, coloured by their first character.
 * @param {EditDiffView} d
 */
export function diffEl(d) {
  const el = h('div', 'diff');
  el.append(h('div', 'line', h('span', 'label', d.kind), ' ', h('span', 'mono', d.path)));
  if (d.tooLarge) {
    el.append(h('div', 'dim', 'too large to diff here'));
    return el;
  }
  for (const hunk of d.hunks) {
    el.append(h('div', 'hunk dim', '@@ -' + hunk.oldStart + ',' + hunk.oldLines + ' +' + hunk.newStart + ',' + hunk.newLines + ' @@'));
    for (const line of hunk.lines) {
      const c = line[0];
      el.append(h('div', 'dl ' + (c === '+' ? 'add' : c === '-' ? 'del' : c === '\\' ? 'dim' : 'ctx'), line));
    }
  }
  return el;
}

/**
 * @param {StatsView} b
 * @param {(seq: number) => HTMLElement} link
 */
function statsBody(b, link) {
  const s = b.stats;
  /** @type {Kid[]} */
  const out = [];
  out.push(
    h(
      'div',
      'line',
      plural(s.turns, 'turn') + ' · ' + plural(s.steps, 'step') + ' · ' + plural(s.toolCalls, 'tool call'),
      s.toolFailures ? ' (' + s.toolFailures + ' failed)' : '',
      ' · writer ' + s.writer.state,
    ),
  );
  const reasons = h('div', 'group');
  reasons.dataset.group = 'reasons';
  reasons.append(h('div', 'label', 'turns by end reason'));
  for (const [k, v] of Object.entries(s.reasons)) reasons.append(h('div', 'line', h('span', 'mono', k), ' ' + num(v)));
  out.push(reasons);

  const alerts = h('div', 'group');
  alerts.dataset.group = 'alerts';
  alerts.append(h('div', 'label', plural(b.alerts.length, 'alert')));
  for (const a of b.alerts) {
    const line = h('div', 'line alert', h('span', 'badge error', a.kind), ' ', link(a.seq), ' ', a.message);
    line.dataset.kind = a.kind;
    alerts.append(line);
  }
  out.push(alerts);

  const t = s.tokens;
  const tokens = h('div', 'group');
  tokens.dataset.group = 'tokens';
  tokens.append(h('div', 'label', 'tokens and cost'));
  for (const [k, v] of Object.entries(t)) if (typeof v === 'number') tokens.append(h('div', 'line', k + ' ' + num(v)));
  for (const [cur, v] of Object.entries(s.cost.byCurrency)) tokens.append(h('div', 'line cost', 'cost ' + v.toFixed(6) + ' ' + cur));
  tokens.append(h('div', 'line dim', s.cost.pricedCalls + ' priced calls, ' + s.cost.unpricedCalls + ' unpriced'));
  // `model` is `provider:model` as recorded; the answer has no separate provider (this line read
  // `u.provider`, which no answer carries, and showed `?/provider:model` until the type said so).
  for (const u of s.cost.unpriced) tokens.append(h('div', 'line dim', 'unpriced: ' + u.model + ' (' + plural(u.calls, 'call') + ')'));
  out.push(tokens);

  const tools = h('div', 'group');
  tools.dataset.group = 'tools';
  tools.append(h('div', 'label', 'top tools'));
  for (const x of s.tools.slice(0, 15)) {
    const line = h('div', 'line', h('span', 'name', x.name), ' ' + plural(x.calls, 'call'));
    if (x.failures) line.append(' · ' + x.failures + ' failed');
    if (x.unanswered) line.append(' · ' + x.unanswered + ' unanswered');
    line.dataset.tool = x.name;
    tools.append(line);
  }
  out.push(tools);
  return out;
}
