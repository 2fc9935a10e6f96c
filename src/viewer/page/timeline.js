// @ts-check
// The timeline: one flat list of rows (segments, then the steps and items of expanded ones),
// drawn by the windowed list. Segment summaries are fetched a page at a time as their rows come
// into view; a turn's parts and a step's items are fetched when it is expanded, and long lists
// end in a "more" row that loads the next page when it is reached.
import { api } from './api.js';
import { button, h } from './dom.js';
import { num } from './format.js';
import { itemBody, itemTone, markClipped, outsideHead, stepHead, turnHead } from './render.js';
/** @import { VirtualList } from './vlist.js' */
/** @import { GrowMessage, Item, ItemsPage, LocateView, MoreAction, Row } from './types.js' */
/** @import { SegmentView, SegmentsPage, StepPage, StepView, TurnPage, TurnPart } from './types.js' */

const PAGE = 100;
const PART_PAGE = 200;
/** @type {Record<Row['kind'], number>} */
const HEIGHT = { placeholder: 34, turn: 34, outside: 34, step: 30, item: 46, more: 30 };

let version = 0;

export class Timeline {
  /**
   * @param {VirtualList<Row>} list
   * @param {object} callbacks
   * @param {(row: Row) => void} callbacks.onSelect
   * @param {(e: unknown) => void} callbacks.onError
   * @param {(kind: 'call' | 'provenance', item: Item) => void} [callbacks.onInspect]
   */
  constructor(list, { onSelect, onError, onInspect }) {
    this.list = list;
    this.onSelect = onSelect;
    this.onError = onError;
    /** @type {(kind: 'call' | 'provenance', item: Item) => void} */
    this.onInspect = onInspect ?? (() => {});
    /** @type {SegmentView[]} summaries by segment index, filled a page at a time (holes until fetched) */
    this.segs = [];
    this.total = 0;
    /** @type {Set<number>} expanded segments */
    this.expanded = new Set();
    /** 'seg/step' → whether the user opened (true) or closed (false) it. */
    /** @type {Map<string, boolean>} */
    this.stepState = new Map();
    /** @type {Map<number, Promise<void>>} segment pages in flight */
    this.pages = new Map();
    /** @type {Set<string>} keys of the "more" rows loading */
    this.loading = new Set();
    /** @type {string | undefined} */
    this.selKey = undefined;
    list.renderRow = (row) => this.renderRow(row);
    list.estimate = (row) => HEIGHT[row.kind] ?? 40;
    list.onWindow = (a, b) => this.onWindow(a, b);
    list.onDrawn = markClipped;
  }

  // ----------------------------------------------------------------------------------------
  // Rows

  /**
   * @param {number} i
   * @returns {Row}
   */
  segRow(i) {
    const d = this.segs[i];
    if (!d) return { key: 's' + i, kind: 'placeholder', depth: 0, seg: i, ver: 0 };
    const base = { key: 's' + i, depth: 0, seg: i, open: this.expanded.has(i), ver: ++version };
    return d.kind === 'turn' ? { ...base, kind: d.kind, data: d } : { ...base, kind: d.kind, data: d };
  }

  /**
   * @param {number} seg
   * @param {number | undefined} step
   * @param {Item} item
   * @param {number} depth
   * @returns {Row}
   */
  itemRow(seg, step, item, depth) {
    return { key: 'e' + item.seq, kind: 'item', depth, seg, step, data: item, ver: ++version };
  }

  /**
   * @param {number} seg
   * @param {StepView} view
   * @param {boolean} open
   * @returns {Row & { kind: 'step' }}
   */
  stepRow(seg, view, open) {
    return { key: 's' + seg + '/t' + view.step, kind: 'step', depth: 1, seg, step: view.step, data: view, open, ver: ++version };
  }

  /**
   * @param {MoreAction} action
   * @param {number} depth
   * @returns {Row}
   */
  moreRow(action, depth) {
    const step = action.type === 'step' ? action.step : undefined;
    const scope = action.type === 'step' ? 's' + action.seg + '/t' + action.step : 's' + action.seg;
    return { key: 'more:' + scope + ':' + action.from, kind: 'more', depth, seg: action.seg, step, action, ver: ++version };
  }

  /** @param {Row} row */
  renderRow(row) {
    const el = h('div', 'r-' + row.kind + ' depth-' + row.depth);
    el.dataset.kind = row.kind;
    el.dataset.key = row.key;
    switch (row.kind) {
      case 'placeholder':
        el.append(h('div', 'head dim', 'loading segment ' + num(row.seg + 1) + ' …'));
        break;
      case 'turn': {
        const head = h('div', 'head', turnHead(row.data, row.open));
        el.append(head);
        const tone = row.data.reason ? ({ completed: 'ok', error: 'error', interrupted: 'error' }[row.data.reason.kind] ?? 'warn') : 'live';
        el.classList.add('tone-' + tone);
        break;
      }
      case 'outside':
        if (row.data.items) {
          for (const item of row.data.items) el.append(this.itemEl(item));
        } else {
          el.append(h('div', 'head', outsideHead(row.data, row.open)));
        }
        break;
      case 'step':
        el.append(h('div', 'head', stepHead(row.data, row.open)));
        break;
      case 'item':
        el.append(this.itemEl(row.data, row));
        break;
      case 'more': {
        const a = row.action;
        el.append(
          h(
            'div',
            'head',
            button(
              this.loading.has(row.key)
                ? 'loading …'
                : 'load more' + (a.type === 'parts' && a.remaining ? ' (' + num(a.remaining) + ' left)' : ''),
              'link',
              () => this.loadMore(row),
            ),
          ),
        );
        break;
      }
    }
    return el;
  }

  /**
   * @param {Item} item
   * @param {Row & { kind: 'item' }} [row] the item's own row (absent for the items inside an outside segment's row)
   */
  itemEl(item, row) {
    const el = h(
      'div',
      'item item-' + item.kind,
      h('span', 'seq', String(item.seq)),
      h('div', 'body', itemBody(item, row ? () => this.showFull(row) : null)),
      h('span', 'inspect-actions', this.actions(item)),
    );
    el.dataset.item = item.kind;
    el.dataset.seq = String(item.seq);
    const tone = itemTone(item);
    if (tone) el.classList.add('tone-' + tone);
    return el;
  }

  /**
   * The inspector's buttons on an item: its call's round trip (tool calls and results), its provenance.
   * @param {Item} item
   */
  actions(item) {
    /** @type {HTMLButtonElement[]} */
    const out = [];
    if ((item.kind === 'tool' || item.kind === 'result') && typeof item.callId === 'string')
      out.push(button('round trip', 'link act-call', () => this.onInspect('call', item), "This call's round trip"));
    out.push(button('provenance', 'link act-prov', () => this.onInspect('provenance', item), 'What this event cites and what cites it'));
    return out;
  }

  // ----------------------------------------------------------------------------------------
  // Segments

  /** @param {number} total */
  init(total) {
    this.total = total;
    /** @type {Row[]} */
    const rows = new Array(total);
    for (let i = 0; i < total; i++) rows[i] = this.segRow(i);
    this.list.setRows(rows);
  }

  /**
   * @param {number} first
   * @param {number} last
   */
  onWindow(first, last) {
    for (let i = first; i <= last; i++) {
      const row = this.list.rows[i];
      if (row.kind === 'placeholder') this.fetchPage(Math.floor(row.seg / PAGE));
      else if (row.kind === 'more' && !this.loading.has(row.key)) this.loadMore(row);
    }
  }

  /** @param {number} p */
  fetchPage(p) {
    if (!this.pages.has(p)) {
      this.pages.set(
        p,
        api('segments', { from: p * PAGE, limit: PAGE })
          .then((/** @type {SegmentsPage} */ r) => {
            for (const v of r.segments) this.setSeg(v);
          })
          .catch((e) => this.onError(e))
          .finally(() => this.pages.delete(p)),
      );
    }
    return this.pages.get(p);
  }

  /** @param {number} seg */
  async ensureSeg(seg) {
    if (!this.segs[seg]) await this.fetchPage(Math.floor(seg / PAGE));
  }

  /** @param {SegmentView} v */
  setSeg(v) {
    this.segs[v.index] = v;
    const i = this.list.indexOfKey('s' + v.index);
    if (i >= 0) this.list.update(i, this.segRow(v.index));
  }

  /** @param {number} seg */
  redrawSeg(seg) {
    const i = this.list.indexOfKey('s' + seg);
    if (i >= 0) this.list.update(i, this.segRow(seg));
  }

  /**
   * Rows after row i that belong to it (deeper rows).
   * @param {number} i
   */
  childCount(i) {
    const d = this.list.rows[i].depth;
    let k = i + 1;
    while (k < this.list.rows.length && this.list.rows[k].depth > d) k++;
    return k - i - 1;
  }

  /** @param {Row} row */
  expandable(row) {
    if (row.kind === 'turn' || row.kind === 'step') return true;
    return row.kind === 'outside' && !row.data.items;
  }

  /** @param {number} i */
  async toggle(i) {
    const row = this.list.rows[i];
    if (!row) return;
    if (row.kind === 'more') return this.loadMore(row);
    // Every expandable row has `open`; the `in` test only tells the checker so.
    if (!this.expandable(row) || !('open' in row)) return;
    if (row.kind === 'step') return row.open ? this.collapseStep(row.seg, row.step) : this.expandStep(row.seg, row.step);
    return row.open ? this.collapseSeg(row.seg) : this.expandSeg(row.seg);
  }

  /** @param {number} seg */
  async expandSeg(seg, force = false) {
    if (this.expanded.has(seg) && !force) return;
    this.expanded.add(seg);
    this.redrawSeg(seg);
    const children = await this.segChildren(seg);
    if (!this.expanded.has(seg)) return;
    const i = this.list.indexOfKey('s' + seg);
    if (i < 0) return;
    this.list.splice(i + 1, this.childCount(i), children);
    this.redrawSeg(seg);
    // Steps the user had opened that did not come with their items.
    for (const r of children) if (r.kind === 'step' && r.open && r.needsItems) await this.expandStep(seg, r.step, true);
  }

  /** @param {number} seg */
  collapseSeg(seg) {
    this.expanded.delete(seg);
    const i = this.list.indexOfKey('s' + seg);
    if (i < 0) return;
    this.removeChildren(i);
    this.redrawSeg(seg);
  }

  /**
   * Remove row i's children; a selection among them moves to row i.
   * @param {number} i
   */
  removeChildren(i) {
    const n = this.childCount(i);
    const sel = this.selectedIndex();
    this.list.splice(i + 1, n, []);
    if (sel > i && sel <= i + n) this.select(i, false);
  }

  /**
   * @param {number} seg
   * @returns {Promise<Row[]>}
   */
  async segChildren(seg, limit = PART_PAGE) {
    const d = this.segs[seg];
    if (d.kind === 'turn') {
      /** @type {TurnPage} */
      const r = await api('turn', { segment: seg, from: 0, limit });
      this.segs[seg] = r.turn;
      return this.partRows(seg, r.parts, r.total, 0);
    }
    /** @type {ItemsPage} */
    const r = await api('items', { from: d.start, to: d.end, limit: PART_PAGE });
    const rows = r.items.map((it) => this.itemRow(seg, undefined, it, 1));
    if (r.next !== undefined) rows.push(this.moreRow({ type: 'outside', seg, from: r.next, to: d.end }, 1));
    return rows;
  }

  /**
   * @param {number} seg
   * @param {TurnPart[]} parts
   * @param {number} total
   * @param {number} from
   */
  partRows(seg, parts, total, from) {
    /** @type {Row[]} */
    const out = [];
    for (const p of parts) {
      if (p.kind === 'item') {
        out.push(this.itemRow(seg, undefined, p.item, 1));
        continue;
      }
      const k = seg + '/' + p.step.step;
      const open = this.stepState.get(k) ?? p.items !== undefined;
      const row = this.stepRow(seg, p.step, open);
      out.push(row);
      if (open && p.items) {
        for (const it of p.items) out.push(this.itemRow(seg, p.step.step, it, 2));
        if (p.next !== undefined) out.push(this.moreRow({ type: 'step', seg, step: p.step.step, from: p.next }, 2));
      } else if (open) {
        row.needsItems = true;
      }
    }
    if (from + parts.length < total)
      out.push(this.moreRow({ type: 'parts', seg, from: from + parts.length, remaining: total - from - parts.length }, 1));
    return out;
  }

  /**
   * @param {number} seg
   * @param {number} step
   */
  async expandStep(seg, step, force = false) {
    const key = 's' + seg + '/t' + step;
    let i = this.list.indexOfKey(key);
    if (i < 0) return;
    const cur = this.list.rows[i];
    if (cur.kind !== 'step' || (cur.open && !force)) return;
    this.stepState.set(seg + '/' + step, true);
    this.list.update(i, { ...cur, open: true, needsItems: false, ver: ++version });
    /** @type {StepPage} */
    const r = await api('step', { segment: seg, step, limit: PART_PAGE });
    i = this.list.indexOfKey(key);
    const now = this.list.rows[i];
    if (i < 0 || now.kind !== 'step' || !now.open) return;
    const rows = r.items.map((it) => this.itemRow(seg, step, it, 2));
    if (r.next !== undefined) rows.push(this.moreRow({ type: 'step', seg, step, from: r.next }, 2));
    this.list.splice(i + 1, this.childCount(i), rows);
  }

  /**
   * @param {number} seg
   * @param {number} step
   */
  collapseStep(seg, step) {
    const i = this.list.indexOfKey('s' + seg + '/t' + step);
    if (i < 0) return;
    const cur = this.list.rows[i];
    if (cur.kind !== 'step') return;
    this.stepState.set(seg + '/' + step, false);
    this.list.update(i, { ...cur, open: false, ver: ++version });
    this.removeChildren(i);
  }

  /** @param {Row} row a "more" row */
  async loadMore(row) {
    if (row.kind !== 'more' || this.loading.has(row.key)) return;
    this.loading.add(row.key);
    const a = row.action;
    try {
      /** @type {Row[]} */
      let rows;
      if (a.type === 'parts') {
        /** @type {TurnPage} */
        const r = await api('turn', { segment: a.seg, from: a.from, limit: PART_PAGE });
        rows = this.partRows(a.seg, r.parts, r.total, a.from);
      } else if (a.type === 'step') {
        /** @type {StepPage} */
        const r = await api('step', { segment: a.seg, step: a.step, from: a.from, limit: PART_PAGE });
        rows = r.items.map((it) => this.itemRow(a.seg, a.step, it, 2));
        if (r.next !== undefined) rows.push(this.moreRow({ ...a, from: r.next }, 2));
      } else {
        /** @type {ItemsPage} */
        const r = await api('items', { from: a.from, to: a.to, limit: PART_PAGE });
        rows = r.items.map((it) => this.itemRow(a.seg, undefined, it, 1));
        if (r.next !== undefined) rows.push(this.moreRow({ ...a, from: r.next }, 1));
      }
      const i = this.list.indexOfKey(row.key);
      if (i >= 0) this.list.splice(i, 1, rows);
    } catch (e) {
      this.onError(e);
    } finally {
      this.loading.delete(row.key);
    }
  }

  /**
   * Fetch the whole text of an item whose strings were cut.
   * @param {Row & { kind: 'item' }} row
   */
  async showFull(row) {
    try {
      /** @type {ItemsPage} */
      const r = await api('items', { from: row.data.seq, limit: 1, full: 1 });
      const item = r.items.find((it) => it.seq === row.data.seq);
      const i = this.list.indexOfKey(row.key);
      if (item && i >= 0) this.list.update(i, { ...row, data: item, ver: ++version });
    } catch (e) {
      this.onError(e);
    }
  }

  // ----------------------------------------------------------------------------------------
  // Live growth

  /** @param {GrowMessage} msg */
  async grow(msg) {
    const wasBottom = this.list.atBottom();
    const known = this.total;
    if (msg.segments > known) {
      /** @type {Row[]} */
      const add = [];
      for (let i = known; i < msg.segments; i++) add.push(this.segRow(i));
      this.list.splice(this.list.rows.length, 0, add);
      this.total = msg.segments;
    }
    // The last segment the page knew may have grown or closed even if the message did not say so.
    const touched = new Set(msg.changed.filter((i) => i < known));
    if (known > 0) touched.add(known - 1);
    for (const seg of touched) {
      if (!this.segs[seg]) continue;
      /** @type {SegmentsPage} */
      const r = await api('segments', { from: seg, limit: 1 });
      if (r.segments[0]) this.setSeg(r.segments[0]);
      if (this.expanded.has(seg)) await this.refreshSeg(seg);
    }
    if (wasBottom) this.list.toBottom();
  }

  /** @param {number} seg */
  async refreshSeg(seg) {
    const i = this.list.indexOfKey('s' + seg);
    if (i < 0) return;
    const shown = this.list.rows.slice(i + 1, i + 1 + this.childCount(i)).filter((r) => r.depth === 1).length;
    const children = await this.segChildren(seg, Math.min(1000, Math.max(PART_PAGE, shown + 20)));
    const j = this.list.indexOfKey('s' + seg);
    if (j < 0 || !this.expanded.has(seg)) return;
    this.list.splice(j + 1, this.childCount(j), children);
    for (const r of children) if (r.kind === 'step' && r.open && r.needsItems) await this.expandStep(seg, r.step, true);
  }

  // ----------------------------------------------------------------------------------------
  // Selection and jumping

  /** @param {number} i */
  select(i, reveal = true) {
    const row = this.list.rows[i];
    if (!row) return;
    this.selKey = row.key;
    this.list.select(row.key);
    if (reveal) this.list.reveal(i);
    this.onSelect(row);
  }

  selectedIndex() {
    return this.selKey === undefined ? -1 : this.list.indexOfKey(this.selKey);
  }

  /** @param {number} i */
  parentIndex(i) {
    const d = this.list.rows[i].depth;
    for (let k = i - 1; k >= 0; k--) if (this.list.rows[k].depth < d) return k;
    return -1;
  }

  /**
   * The row showing `seq` within segment `seg`: the item that starts there, else one that covers it.
   * @param {number} seg
   * @param {number | undefined} _step
   * @param {number} seq
   */
  findRow(seg, _step, seq) {
    const i = this.list.indexOfKey('s' + seg);
    if (i < 0) return -1;
    const seg0 = this.list.rows[i];
    if (seg0.kind === 'outside' && seg0.data.items) return i;
    const end = i + 1 + this.childCount(i);
    let best = -1;
    let score = 0;
    for (let k = i + 1; k < end; k++) {
      const r = this.list.rows[k];
      if (r.kind !== 'item') continue;
      const it = r.data;
      const s =
        it.seq === seq
          ? 3
          : ('result' in it && it.result && it.result.seq === seq) || it.last === seq
            ? 2
            : it.seq <= seq && seq <= (it.last ?? it.seq)
              ? 1
              : 0;
      if (s > score) {
        score = s;
        best = k;
        if (s === 3) break;
      }
    }
    return best;
  }

  /**
   * @param {number} seg
   * @param {number | undefined} step
   */
  moreIndex(seg, step) {
    const i = this.list.indexOfKey('s' + seg);
    if (i < 0) return -1;
    const end = i + 1 + this.childCount(i);
    for (let k = i + 1; k < end; k++) {
      const r = this.list.rows[k];
      if (r.kind === 'more' && (step === undefined || r.action.type !== 'step' || r.step === step)) return k;
    }
    return -1;
  }

  /** @param {number} seq */
  async goToSeq(seq) {
    /** @type {LocateView} */
    const loc = await api('locate', { seq });
    await this.ensureSeg(loc.segment);
    const seg = this.segs[loc.segment];
    if (!seg) return false;
    if (seg.kind === 'turn' || !seg.items) await this.expandSeg(loc.segment);
    if (loc.step !== undefined) await this.expandStep(loc.segment, loc.step);
    for (let tries = 0; tries < 200; tries++) {
      const i = this.findRow(loc.segment, loc.step, seq);
      if (i >= 0) {
        this.select(i, false);
        this.list.reveal(i, true);
        this.flash(i);
        return true;
      }
      const more = this.moreIndex(loc.segment, loc.step);
      if (more < 0) break;
      await this.loadMore(this.list.rows[more]);
    }
    // An event without a row of its own (a step boundary): its step, or its segment.
    const fallback =
      loc.step !== undefined ? this.list.indexOfKey('s' + loc.segment + '/t' + loc.step) : this.list.indexOfKey('s' + loc.segment);
    if (fallback >= 0) {
      this.select(fallback, false);
      this.list.reveal(fallback, true);
    }
    return fallback >= 0;
  }

  /** @param {number} i */
  flash(i) {
    const el = this.list.element(i);
    if (!el) return;
    el.classList.add('flash');
    setTimeout(() => el.classList.remove('flash'), 1200);
  }
}
