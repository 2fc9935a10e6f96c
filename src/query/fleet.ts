/**
 * Statistics over many sessions (a whole store, or the logs given): each session's figures
 * summed, its distributions merged from the samples (so fleet percentiles are exact), its alerts
 * kept with the session id, and one row per session.
 */
import { distOf } from './dist.js';
import type { Alert } from './alerts.js';
import {
  CostAcc,
  TokenAcc,
  type Cost,
  type ErrorsByCode,
  type SessionStats,
  type StatsSamples,
  type ToolStats,
  type Tokens,
  type Totals,
} from './stats.js';

export interface SessionRow {
  id: string;
  cwd: string | null;
  createdAt: number | null;
  lastTime: number | null;
  turns: number;
  tokens: Tokens;
  cost: Cost;
  reasons: Record<string, number>;
  alerts: number;
  /** Where it was read from (a path), when known. */
  path?: string;
}

export interface FleetStats extends Totals {
  sessions: number;
  dangling: { sessionId: string; turn: number }[];
  live: { sessionId: string; turn: number }[];
  unanswered: number;
  alerts: Alert[];
  perSession: SessionRow[];
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

export class FleetFold {
  private n = 0;
  private events = 0;
  private turns = 0;
  private steps = 0;
  private attempts = 0;
  private toolCalls = 0;
  private toolFailures = 0;
  private readonly tokens = new TokenAcc();
  private readonly cost = new CostAcc();
  private readonly models = new Map<string, { provider: string | null; model: string | null; tokens: TokenAcc; cost: CostAcc }>();
  private readonly ttft: number[] = [];
  private readonly decode: number[] = [];
  private readonly tool: number[] = [];
  private readonly reasons: Record<string, number> = {};
  private retries = 0;
  private readonly retryCodes: Record<string, number> = {};
  private readonly errors: ErrorsByCode = { model: {}, tool: {}, turn: {} };
  private readonly tools = new Map<
    string,
    { calls: number; failures: number; errors: Record<string, number>; unanswered: number; durations: number[] }
  >();
  private readonly dangling: { sessionId: string; turn: number }[] = [];
  private readonly live: { sessionId: string; turn: number }[] = [];
  private unanswered = 0;
  private readonly alerts: Alert[] = [];
  private readonly rows: SessionRow[] = [];

  add(s: SessionStats, samples: StatsSamples, alerts: readonly Alert[], path?: string): void {
    this.n++;
    this.events += s.events;
    this.turns += s.turns;
    this.steps += s.steps;
    this.attempts += s.attempts;
    this.toolCalls += s.toolCalls;
    this.toolFailures += s.toolFailures;
    this.tokens.merge(s.tokens);
    this.cost.merge(s.cost);
    for (const m of s.models) {
      const key = `${m.provider ?? '?'}:${m.model ?? '?'}`;
      let acc = this.models.get(key);
      if (!acc) {
        acc = { provider: m.provider, model: m.model, tokens: new TokenAcc(), cost: new CostAcc() };
        this.models.set(key, acc);
      }
      acc.tokens.merge(m.tokens);
      acc.cost.merge(m.cost);
    }
    for (const x of samples.ttft) this.ttft.push(x);
    for (const x of samples.decode) this.decode.push(x);
    for (const x of samples.tool) this.tool.push(x);
    add(this.reasons, s.reasons);
    this.retries += s.retries.count;
    add(this.retryCodes, s.retries.byCode);
    add(this.errors.model, s.errors.model);
    add(this.errors.tool, s.errors.tool);
    add(this.errors.turn, s.errors.turn);
    for (const t of s.tools) {
      let acc = this.tools.get(t.name);
      if (!acc) {
        acc = { calls: 0, failures: 0, errors: {}, unanswered: 0, durations: [] };
        this.tools.set(t.name, acc);
      }
      acc.calls += t.calls;
      acc.failures += t.failures;
      acc.unanswered += t.unanswered;
      add(acc.errors, t.errors);
      for (const x of samples.toolDurations.get(t.name) ?? []) acc.durations.push(x);
    }
    for (const turn of s.dangling) this.dangling.push({ sessionId: s.id, turn });
    for (const turn of s.live) this.live.push({ sessionId: s.id, turn });
    this.unanswered += s.unanswered.length;
    for (const a of alerts) this.alerts.push(a);
    const row: SessionRow = {
      id: s.id,
      cwd: s.cwd,
      createdAt: s.createdAt,
      lastTime: s.lastTime,
      turns: s.turns,
      tokens: s.tokens,
      cost: s.cost,
      reasons: s.reasons,
      alerts: alerts.length,
    };
    if (path !== undefined) row.path = path;
    this.rows.push(row);
  }

  result(): FleetStats {
    const tools: ToolStats[] = [...this.tools].map(([name, t]) => ({
      name,
      calls: t.calls,
      failures: t.failures,
      errors: { ...t.errors },
      unanswered: t.unanswered,
      duration: distOf(t.durations),
    }));
    tools.sort((a, b) => b.calls - a.calls || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      sessions: this.n,
      events: this.events,
      turns: this.turns,
      steps: this.steps,
      attempts: this.attempts,
      toolCalls: this.toolCalls,
      toolFailures: this.toolFailures,
      tokens: this.tokens.done(),
      cost: this.cost.done(),
      models: [...this.models.values()]
        .map((m) => ({ provider: m.provider, model: m.model, tokens: m.tokens.done(), cost: m.cost.done() }))
        .sort((a, b) => b.tokens.calls - a.tokens.calls),
      ttft: distOf(this.ttft),
      decode: distOf(this.decode),
      tool: distOf(this.tool),
      reasons: { ...this.reasons },
      retries: { count: this.retries, byCode: { ...this.retryCodes } },
      errors: { model: { ...this.errors.model }, tool: { ...this.errors.tool }, turn: { ...this.errors.turn } },
      tools,
      dangling: [...this.dangling],
      live: [...this.live],
      unanswered: this.unanswered,
      alerts: [...this.alerts],
      perSession: [...this.rows],
    };
  }
}
