/**
 * Where a compaction may cut the surface, and which span it takes.
 *
 * A cut at position i (between node i-1 and node i) is safe when no tool call before it is
 * answered after it, and no call before it is still unanswered: a summary must never swallow a
 * call whose result stays visible (the provider would see an orphan result), nor a result whose
 * call stays visible. Both sides of every pair are checked, so a cut is safe as the start or the
 * end of a region. Call ids are matched in order (a result answers the latest open call with its
 * id), because ids repeat across turns in some providers' streams. Turn boundaries are not
 * protected: old steps of a runaway turn may be summarised.
 */
import type { Message } from '../model/message.js';

/** `safe[i]` for i in 0..n: may a region boundary sit before node i? */
export function safeCuts(messages: readonly (Message | null)[]): boolean[] {
  const n = messages.length;
  // Difference array over cut positions: +1 where a pair's protected interval (call, result] opens.
  const diff = new Array<number>(n + 2).fill(0);
  const open = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    if (!m) continue;
    for (const b of m.content) {
      if (b.type === 'tool-result') {
        const calls = open.get(b.toolCallId);
        const c = calls?.pop();
        // An orphan result (its call shadowed or never logged) ties nothing to anything.
        if (c !== undefined) {
          diff[c + 1]! += 1;
          diff[i + 1]! -= 1;
        }
      }
    }
    for (const b of m.content) {
      if (b.type === 'tool-call') {
        const calls = open.get(b.id) ?? [];
        calls.push(i);
        open.set(b.id, calls);
      }
    }
  }
  for (const calls of open.values()) {
    for (const c of calls) {
      diff[c + 1]! += 1;
      diff[n + 1]! -= 1;
    }
  }
  const safe = new Array<boolean>(n + 1);
  let depth = 0;
  for (let i = 0; i <= n; i++) {
    depth += diff[i]!;
    safe[i] = depth === 0;
  }
  return safe;
}

export type RegionMode =
  /** Keep the retain budget verbatim, summarise what is older. */
  | 'pressure'
  /** Summarise as much as possible: everything but the newest indivisible unit. */
  | 'overflow'
  /** Like pressure; when everything fits the budget, like overflow (the user asked for it). */
  | 'manual';

export interface RegionInput {
  /** Heuristic tokens of each surface node, in surface order. */
  tokens: readonly number[];
  safe: readonly boolean[];
  /** Nodes from this position on are the current step's input and are never shadowed. */
  protectFrom: number;
  /** Tokens of recent history to keep verbatim (pressure, manual); undefined: unknown. */
  retainBudget?: number;
  mode: RegionMode;
}

/**
 * The cut c such that nodes [0, c) are summarised; undefined when nothing can be. The region
 * always starts at the head of the surface, so an earlier checkpoint is folded into the new one.
 */
export function chooseCut(input: RegionInput): number | undefined {
  const n = input.tokens.length;
  // At least the newest unit stays: the model continues from real messages, not only a summary.
  let maxCut = -1;
  for (let c = Math.min(n - 1, input.protectFrom); c >= 1; c--) {
    if (input.safe[c]) {
      maxCut = c;
      break;
    }
  }
  if (maxCut < 1) return undefined;
  const budget = input.retainBudget;
  if (input.mode === 'overflow' || budget === undefined) return maxCut;
  const total = input.tokens.reduce((a, t) => a + t, 0);
  if (input.mode === 'manual' && total <= budget) return maxCut;
  // The smallest safe cut whose tail fits the budget keeps as much verbatim as allowed.
  let tail = total;
  for (let c = 0; c <= maxCut; c++) {
    if (c >= 1 && input.safe[c] && tail <= budget) return c;
    tail -= input.tokens[c]!;
  }
  return maxCut;
}
