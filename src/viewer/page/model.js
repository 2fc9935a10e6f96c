// @ts-check
// The model view: the history the model saw as of a seq, as the server derives it from the log.
import { api } from './api.js';
import { button, clear, h } from './dom.js';
import { num, plural } from './format.js';
import { blocks, sourceLabel } from './render.js';
/** @import { HistoryView, MessageView } from './types.js' */

const PAGE = 100;

export class ModelView {
  /**
   * @param {object} o
   * @param {HTMLElement} o.panel the panel, hidden while the view is off
   * @param {HTMLInputElement} o.seqInput the seq the view shows
   * @param {HTMLElement} o.info what the view shows, in words
   * @param {HTMLElement} o.list the messages
   * @param {(e: unknown) => void} o.onError
   */
  constructor({ panel, seqInput, info, list, onError }) {
    this.panel = panel;
    this.seqInput = seqInput;
    this.info = info;
    this.listEl = list;
    this.onError = onError;
    /** @type {number | undefined} */
    this.seq = undefined;
    this.token = 0;
  }

  get visible() {
    return !this.panel.hidden;
  }

  /** @param {number | null | undefined} seq */
  async show(seq) {
    if (seq === undefined || seq === null) return;
    this.seq = seq;
    this.seqInput.value = String(seq);
    const token = ++this.token;
    try {
      /** @type {HistoryView} */
      const r = await api('history', { seq, from: 0, limit: PAGE });
      if (token !== this.token) return;
      clear(this.info);
      const where = [r.at.type];
      if (r.at.turn !== undefined) where.push('turn ' + r.at.turn + (r.at.step !== undefined ? ' step ' + r.at.step : ''));
      this.info.append(
        h('span', 'count', plural(r.total, 'message')),
        h('span', 'dim', ' after #' + r.seq + ' (' + where.join(', ') + ')'),
      );
      clear(this.listEl);
      this.append(r);
    } catch (e) {
      if (token === this.token) this.onError(e);
    }
  }

  /** @param {HistoryView} r */
  append(r) {
    for (const m of r.messages) this.listEl.append(this.message(m));
    const shown = r.from + r.messages.length;
    if (shown < r.total) {
      const more = button('load more (' + num(r.total - shown) + ' left)', 'link', async () => {
        more.remove();
        try {
          this.append(await api('history', { seq: r.seq, from: shown, limit: PAGE }));
        } catch (e) {
          this.onError(e);
        }
      });
      this.listEl.append(more);
    }
  }

  /** @param {MessageView} m */
  message(m) {
    const el = h(
      'div',
      'msg role-' + (m.role === 'assistant' ? 'assistant' : m.role === 'user' ? 'user' : 'other'),
      h(
        'div',
        'line',
        h('span', 'label', '[' + m.index + '] ' + m.role),
        m.source.kind !== m.role ? ' · ' + sourceLabel(m.source) : '',
        h('span', 'dim', ' · #' + m.seq + ' · ' + m.id),
      ),
      blocks(m.blocks, null),
    );
    el.dataset.seq = String(m.seq);
    return el;
  }
}
