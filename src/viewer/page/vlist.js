// @ts-check
// A windowed list of rows of varying height: only the rows near the viewport are in the DOM,
// between two spacers whose heights stand for the rest. Row heights start as estimates and are
// replaced by measurements once a row has been drawn (kept per row key, so a row that leaves and
// comes back keeps its height). Offsets come from a Fenwick tree over the heights, so finding
// the first visible row of 100 000 is a few dozen steps, and inserting rows (expanding a turn)
// rebuilds the tree in one linear pass.

const OVERSCAN = 600;

/** @typedef {{ key: string, ver?: number }} ListRow a row of the list: found and measured by its key, drawn again when its ver changes */

/** @template {ListRow} R */
export class VirtualList {
  /**
   * @param {object} o
   * @param {HTMLElement} o.scroller the scrolling element
   * @param {HTMLElement} o.top spacer before the rows
   * @param {HTMLElement} o.rows container of the drawn rows
   * @param {HTMLElement} o.bottom spacer after the rows
   * @param {(row: R) => HTMLElement} o.render draws one row
   * @param {(row: R) => number} o.estimate height guess for a row never drawn
   * @param {(first: number, last: number) => void} [o.onWindow] the drawn range, after each draw
   */
  constructor(o) {
    this.scroller = o.scroller;
    this.topEl = o.top;
    this.rowsEl = o.rows;
    this.bottomEl = o.bottom;
    this.renderRow = o.render;
    this.estimate = o.estimate;
    this.onWindow = o.onWindow ?? (() => {});
    /** @type {((el: HTMLElement) => void) | undefined} set by the owner: called with each row drawn */
    this.onDrawn = undefined;
    /** @type {R[]} */
    this.rows = [];
    this.h = new Float64Array(0);
    this.tree = new Float64Array(1);
    this.total = 0;
    this.known = new Map();
    this.drawn = new Map();
    this.selectedKey = undefined;
    this.scheduled = false;
    this.settle = 0;
    this.resize = new ResizeObserver(() => this.schedule());
    this.scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    // A row pinned by a jump lets go as soon as the reader scrolls themselves.
    for (const ev of ['wheel', 'pointerdown', 'touchstart', 'keydown'])
      this.scroller.addEventListener(ev, () => (this.pin = undefined), { passive: true });
    window.addEventListener('resize', () => this.schedule());
  }

  get length() {
    return this.rows.length;
  }

  /** @param {R[]} rows */
  setRows(rows) {
    this.rows = rows;
    this.rebuild();
  }

  /**
   * Replace `remove` rows at `at` with `add`.
   * @param {number} at
   * @param {number} remove
   * @param {R[]} add
   */
  splice(at, remove, add) {
    this.rows = this.rows.slice(0, at).concat(add, this.rows.slice(at + remove));
    this.rebuild();
  }

  /**
   * Row `i`'s data changed (bump `row.ver` first): it is drawn again.
   * @param {number} i
   * @param {R} row
   */
  update(i, row) {
    this.rows[i] = row;
    this.schedule();
  }

  /** @param {string} key */
  indexOfKey(key) {
    for (let i = 0; i < this.rows.length; i++) if (this.rows[i].key === key) return i;
    return -1;
  }

  rebuild() {
    const n = this.rows.length;
    this.h = new Float64Array(n);
    this.tree = new Float64Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const r = this.rows[i];
      const v = this.known.get(r.key) ?? this.estimate(r);
      this.h[i] = v;
      total += v;
    }
    for (let i = 1; i <= n; i++) {
      this.tree[i] += this.h[i - 1];
      const j = i + (i & -i);
      if (j <= n) this.tree[j] += this.tree[i];
    }
    this.total = total;
    this.schedule();
  }

  /**
   * Sum of the heights of rows 0 … i−1.
   * @param {number} i
   */
  offset(i) {
    let s = 0;
    for (let j = i; j > 0; j -= j & -j) s += this.tree[j];
    return s;
  }

  /**
   * @param {number} i
   * @param {number} delta
   */
  grow(i, delta) {
    for (let j = i + 1; j < this.tree.length; j += j & -j) this.tree[j] += delta;
    this.total += delta;
  }

  /**
   * The row at vertical position y.
   * @param {number} y
   */
  indexAt(y) {
    const n = this.rows.length;
    if (n === 0) return 0;
    let pos = 0;
    let rem = y;
    let step = 1;
    while (step * 2 <= n) step *= 2;
    for (; step > 0; step >>= 1) {
      if (pos + step <= n && this.tree[pos + step] <= rem) {
        pos += step;
        rem -= this.tree[pos];
      }
    }
    return Math.min(pos, n - 1);
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.draw());
  }

  /** Draw now (tests and keyboard navigation want the DOM current). */
  draw() {
    this.scheduled = false;
    const n = this.rows.length;
    const st = this.scroller.scrollTop;
    const vh = this.scroller.clientHeight;
    const want = [];
    if (n > 0) {
      let i = this.indexAt(Math.max(0, st - OVERSCAN));
      let y = this.offset(i);
      const end = st + vh + OVERSCAN;
      while (i < n && (y < end || want.length === 0) && want.length < 400) {
        want.push(i);
        y += this.h[i];
        i++;
      }
    }
    const keep = new Set();
    let prev = null;
    for (const i of want) {
      const row = this.rows[i];
      let d = this.drawn.get(row.key);
      if (!d || d.ver !== row.ver || d.row !== row) {
        const el = this.renderRow(row);
        el.classList.add('row');
        if (d) {
          d.el.replaceWith(el);
          this.resize.unobserve(d.el);
        }
        d = { el, ver: row.ver, row, fresh: true };
        this.drawn.set(row.key, d);
        this.resize.observe(el);
      }
      d.el.dataset.i = String(i);
      d.el.classList.toggle('selected', row.key === this.selectedKey);
      keep.add(row.key);
      const expected = prev ? prev.nextSibling : this.rowsEl.firstChild;
      if (expected !== d.el) this.rowsEl.insertBefore(d.el, expected);
      prev = d.el;
      if (d.fresh) {
        d.fresh = false;
        this.onDrawn?.(d.el);
      }
    }
    for (const [key, d] of this.drawn) {
      if (keep.has(key)) continue;
      d.el.remove();
      this.resize.unobserve(d.el);
      this.drawn.delete(key);
    }
    if (want.length === 0) {
      this.topEl.style.height = '0px';
      this.bottomEl.style.height = '0px';
      return;
    }
    const first = want[0];
    const last = want[want.length - 1];
    // Keep the first row that is on screen where it is while measured heights replace estimates;
    // after a jump, keep the row jumped to where reveal put it instead (the rows above it being
    // measured would otherwise push it off screen on a long log).
    let anchor = first;
    while (anchor < last && this.offset(anchor + 1) <= st) anchor++;
    let anchorGap = this.offset(anchor) - st;
    const pin = this.pin;
    const pinned = pin ? this.indexOfKey(pin.key) : -1;
    if (pin && pinned >= 0) {
      anchor = pinned;
      anchorGap = pin.gap;
    }
    let changed = false;
    for (const i of want) {
      const d = this.drawn.get(this.rows[i].key);
      const hh = d.el.offsetHeight;
      if (hh > 0 && hh !== this.h[i]) {
        this.grow(i, hh - this.h[i]);
        this.h[i] = hh;
        changed = true;
      }
      if (hh > 0) this.known.set(this.rows[i].key, hh);
    }
    this.topEl.style.height = this.offset(first) + 'px';
    this.bottomEl.style.height = Math.max(0, this.total - this.offset(last + 1)) + 'px';
    let moved = false;
    if (changed) {
      const target = this.offset(anchor) - anchorGap;
      if ((st > 0 || pinned >= 0) && Math.abs(target - st) > 0.5) this.scroller.scrollTop = target;
    }
    // The offsets above are sums of heights, which can still disagree with the page (rows drawn
    // but not yet laid out, a scroll clamped by a spacer not yet resized). The row jumped to is
    // where the reader looks, so check where the browser actually put it and move it into view.
    if (pin && pinned >= 0) moved = this.keepInView(pinned, pin.gap);
    if (changed || moved) {
      // Heights changed, so the window may need other rows; settle within a few frames. A pinned
      // row keeps being checked (each draw it moves, and its resize, schedule another).
      if (this.settle++ < 8 || (pin && moved)) this.schedule();
    } else {
      this.settle = 0;
      this.pin = undefined;
    }
    this.onWindow(first, last);
  }

  /**
   * Scroll so the drawn row i has its top `gap` px below the scroller's top edge, as measured by
   * the browser, when it is not already within the viewport there. Returns whether it scrolled.
   * @param {number} i
   * @param {number} gap
   */
  keepInView(i, gap) {
    const el = this.element(i);
    if (!el) return false;
    const box = el.getBoundingClientRect();
    const view = this.scroller.getBoundingClientRect();
    const vh = this.scroller.clientHeight;
    const want = Math.max(0, Math.min(gap, vh - Math.min(box.height, vh) - 24, vh / 3));
    const at = box.top - view.top;
    // On screen with its top visible (or, taller than the screen, filling it): leave it.
    if (at >= 0 && at + Math.min(box.height, vh) <= vh + 0.5) return false;
    const before = this.scroller.scrollTop;
    this.scroller.scrollTop = before + (at - want);
    return Math.abs(this.scroller.scrollTop - before) > 0.5;
  }

  /** Draw every row again (the search highlight changed). Measured heights are kept. */
  redrawAll() {
    for (const d of this.drawn.values()) {
      d.el.remove();
      this.resize.unobserve(d.el);
    }
    this.drawn.clear();
    this.draw();
  }

  /** @param {string | undefined} key */
  select(key) {
    this.selectedKey = key;
    for (const [k, d] of this.drawn) d.el.classList.toggle('selected', k === key);
  }

  /**
   * Scroll so row i is in view (with some margin), then draw.
   * @param {number} i
   */
  reveal(i, center = false) {
    if (i < 0 || i >= this.rows.length) return;
    const top = this.offset(i);
    const bottom = top + this.h[i];
    const st = this.scroller.scrollTop;
    const vh = this.scroller.clientHeight;
    if (center) this.scroller.scrollTop = Math.max(0, top - vh / 3);
    else if (top < st) this.scroller.scrollTop = Math.max(0, top - 24);
    else if (bottom > st + vh) this.scroller.scrollTop = Math.min(top - 24, bottom - vh + 24);
    else return void this.draw();
    // Pinned until the heights settle: measuring the rows drawn around it keeps it in place.
    this.pin = { key: this.rows[i].key, gap: top - this.scroller.scrollTop };
    this.settle = 0;
    this.draw();
  }

  /** @param {number} i */
  element(i) {
    const row = this.rows[i];
    return row ? this.drawn.get(row.key)?.el : undefined;
  }

  atBottom() {
    const s = this.scroller;
    return s.scrollTop + s.clientHeight >= s.scrollHeight - 4;
  }

  toBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.draw();
  }
}
