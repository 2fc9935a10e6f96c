/**
 * The status line: what the agent is doing and what it has cost so far, on one line that fits
 * the terminal. `renderStatus` is pure (figures in, one painted line out); `StatusTracker` folds a
 * session's committed events into those figures with the query layer's `StatsFold`, the same fold
 * `dsh log stats` runs, so tokens and cost here are the figures the log reports afterwards, priced
 * by the one price table (`src/llm/pricing.ts`).
 *
 * When the line is too wide, parts are dropped from the least useful up (sandbox, approval mode,
 * cache, model, cost, tokens) before anything is cut.
 */
import type { SessionEvent } from '../../session/events.js';
import type { PriceTable } from '../../llm/pricing.js';
import { totalInputTokens, type TokenUsage } from '../../model/usage.js';
import { StatsFold, type Cost } from '../../query/index.js';
import { paint, span, type RenderOptions, type Span, type SpanLine } from './style.js';
import { clipSpans, safeText, spansWidth } from './width.js';
import { compactCount, elapsed } from './units.js';

export const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;

export interface StatusCost {
  /** Priced calls' totals by currency. */
  byCurrency: Record<string, number>;
  /** Calls no price applies to (counted, never as zero). */
  unpricedCalls: number;
}

export interface StatusInput {
  /** A turn is running: the spinner turns. */
  busy: boolean;
  /** Spinner frame (any integer; taken modulo the frames). */
  frame: number;
  /** Time of the running turn, or of the last one. */
  elapsedMs: number;
  model?: string | undefined;
  tokens?: { input: number; output: number; cacheRead: number; cacheWrite: number } | undefined;
  cost?: StatusCost | undefined;
  /** Prompt tokens of the last call (what the next one starts from) and the route's window. */
  context?: { used: number; window: number | undefined } | undefined;
  sandbox?: string | undefined;
  approval?: string | undefined;
}

/** `$0.0123` (USD), `0.50 CNY`; `+?` when some calls have no price, `cost ?` when none has. */
export function costText(c: StatusCost): string {
  const parts = Object.entries(c.byCurrency)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([cur, v]) => (cur === 'USD' ? `$${money(v)}` : `${money(v)} ${cur}`));
  if (parts.length === 0) return c.unpricedCalls > 0 ? 'cost ?' : '$0';
  return parts.join(' + ') + (c.unpricedCalls > 0 ? ' +?' : '');
}

function money(v: number): string {
  return v >= 1 ? v.toFixed(2) : v >= 0.01 ? v.toFixed(3) : v.toFixed(4);
}

interface Part {
  /** Lower is dropped later. */
  rank: number;
  spans: Span[];
}

/** The status line as one painted line of at most `opts.width` columns. */
export function renderStatus(s: StatusInput, opts: RenderOptions): string[] {
  const parts: Part[] = [];
  const head: Span[] = [];
  if (s.busy) head.push(span(SPINNER_FRAMES[((s.frame % 10) + 10) % 10]!, 'cyan'), span(' '));
  head.push(span(elapsed(s.elapsedMs), s.busy ? 'bold' : 'dim'));
  parts.push({ rank: 0, spans: head });
  if (s.model) parts.push({ rank: 4, spans: [span(safeText(s.model), 'magenta')] });
  if (s.tokens) {
    parts.push({ rank: 2, spans: [span(`in ${compactCount(s.tokens.input)} out ${compactCount(s.tokens.output)}`)] });
    const cache = s.tokens.cacheRead + s.tokens.cacheWrite;
    if (cache > 0) parts.push({ rank: 5, spans: [span(`cache ${compactCount(cache)}`, 'dim')] });
  }
  if (s.cost) parts.push({ rank: 3, spans: [span(costText(s.cost), 'green')] });
  if (s.context?.window && s.context.window > 0) {
    const pct = Math.round((100 * s.context.used) / s.context.window);
    parts.push({ rank: 1, spans: [span(`ctx ${pct}%`, pct >= 90 ? 'red' : pct >= 70 ? 'yellow' : 'dim')] });
  } else if (s.context && s.context.used > 0) parts.push({ rank: 1, spans: [span(`ctx ${compactCount(s.context.used)}`, 'dim')] });
  if (s.approval) parts.push({ rank: 6, spans: [span(`approval ${safeText(s.approval)}`, 'dim')] });
  if (s.sandbox) parts.push({ rank: 7, spans: [span(safeText(s.sandbox), 'dim')] });

  const join = (ps: Part[]): SpanLine => ps.flatMap((p, i) => (i === 0 ? p.spans : [span(' · ', 'dim'), ...p.spans]));
  let shown = parts;
  while (shown.length > 1 && spansWidth(join(shown)) > opts.width) {
    const worst = Math.max(...shown.map((p) => p.rank));
    shown = shown.filter((p) => p.rank !== worst);
  }
  return [paint(clipSpans(join(shown), opts.width, true), opts.color)];
}

/**
 * A session's events folded into the status figures. Push every committed event in order;
 * `input()` gives the figures for a status line at a given instant.
 */
export class StatusTracker {
  private readonly fold: StatsFold;
  private cached: { cost: Cost; tokens: StatusInput['tokens'] } | undefined;
  private lastUsage: TokenUsage | undefined;
  private window: number | undefined;
  private model: string | undefined;
  private turnStart: number | undefined;
  private turnEnd: number | undefined;

  constructor(prices?: PriceTable) {
    this.fold = new StatsFold({ detail: false, ...(prices ? { prices } : {}) });
  }

  push(e: SessionEvent): void {
    this.fold.push(e);
    switch (e.type) {
      case 'turn/start':
        this.turnStart = e.time;
        this.turnEnd = undefined;
        break;
      case 'turn/end':
        this.turnEnd = e.time;
        this.cached = undefined;
        break;
      case 'request/context':
        this.window = e.data.contextWindow;
        this.model = e.data.model;
        break;
      case 'assistant/message':
        if (e.data.usage) this.lastUsage = e.data.usage;
        this.cached = undefined;
        break;
      default:
        // Other billed records (a compaction's summary, a failed attempt's usage) change the
        // fold's totals too; the figures are read again at the next message or turn end.
        if (e.type.startsWith('compaction/')) this.cached = undefined;
        break;
    }
  }

  get running(): boolean {
    return this.turnStart !== undefined && this.turnEnd === undefined;
  }

  /** The figures at `now` (epoch ms), with what the caller knows beside the log. */
  input(now: number, extra: { frame?: number; sandbox?: string; approval?: string; window?: number } = {}): StatusInput {
    if (!this.cached) {
      const t = this.fold.result({ id: '' }).stats;
      this.cached = {
        cost: t.cost,
        tokens: { input: t.tokens.input, output: t.tokens.output, cacheRead: t.tokens.cacheRead, cacheWrite: t.tokens.cacheWrite },
      };
    }
    const start = this.turnStart;
    const end = this.turnEnd ?? now;
    const window = this.window ?? extra.window;
    return {
      busy: this.running,
      frame: extra.frame ?? 0,
      elapsedMs: start === undefined ? 0 : end - start,
      model: this.model,
      tokens: this.cached.tokens,
      cost: { byCurrency: this.cached.cost.byCurrency, unpricedCalls: this.cached.cost.unpricedCalls },
      context: this.lastUsage ? { used: totalInputTokens(this.lastUsage) + this.lastUsage.outputTokens, window } : undefined,
      sandbox: extra.sandbox,
      approval: extra.approval,
    };
  }
}
