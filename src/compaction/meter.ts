/**
 * The token meter: how many tokens the next request would take, without a tokenizer.
 *
 * The heuristic (documented in docs/compaction.md, and what `shadowedTokenCount` records):
 * - text: one token per 4 ASCII characters (rounded up), plus one token per non-ASCII character
 *   (CJK and most symbols cost about a token each in the BPE vocabularies in use; accented Latin
 *   is overcounted, which errs toward compacting early rather than overflowing);
 * - a message: 4 tokens of role and framing overhead plus its blocks; a tool call adds 4 tokens
 *   beside its name and raw arguments, a tool result 4 beside its content; an image counts
 *   1000 tokens;
 * - the request header: the system prompt as one message, and each tool schema as its JSON text
 *   plus 4.
 *
 * Anchoring. A heuristic drifts; the provider's reported usage does not. When the latest
 * successful model call was made with the header now in force, and the surface has only grown by
 * appends since (no replace after that call began), the measurement is that call's reported
 * input (cache reads and writes included) plus the estimate of the nodes appended since its
 * request was built (its own answer included). Otherwise everything is estimated.
 */
import type { ContentBlock, Message } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import { totalInputTokens } from '../model/usage.js';
import type { EpochHeader } from '../session/events.js';
import { deriveEventMessage } from '../session/derive.js';
import { headerEquals } from '../session/request-header.js';
import type { Session } from '../session/session.js';
import { headerBefore } from './tracker.js';

export const ASCII_CHARS_PER_TOKEN = 4;
export const MESSAGE_OVERHEAD_TOKENS = 4;
export const TOOL_BLOCK_OVERHEAD_TOKENS = 4;
export const TOOL_SCHEMA_OVERHEAD_TOKENS = 4;
export const IMAGE_TOKENS = 1000;

export function estimateText(text: string): number {
  // All ASCII (nearly every English or code text): one native length count instead of a loop
  // over the characters, ~30x faster on a resumed history of tens of millions of characters.
  if (Buffer.byteLength(text, 'utf8') === text.length) return Math.ceil(text.length / ASCII_CHARS_PER_TOKEN);
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) ascii++;
    // A surrogate pair is one character: count its high half only.
    else if (c < 0xdc00 || c > 0xdfff) other++;
  }
  return Math.ceil(ascii / ASCII_CHARS_PER_TOKEN) + other;
}

export function estimateBlocks(blocks: readonly ContentBlock[]): number {
  // Iterative: tool results nest blocks, and a machine-built message may nest them deeply.
  let total = 0;
  const stack: (readonly ContentBlock[])[] = [blocks];
  while (stack.length > 0) {
    for (const b of stack.pop()!) {
      switch (b.type) {
        case 'text':
        case 'reasoning':
          total += estimateText(b.text);
          break;
        case 'tool-call':
          total += TOOL_BLOCK_OVERHEAD_TOKENS + estimateText(b.name) + estimateText(b.arguments);
          break;
        case 'tool-result':
          total += TOOL_BLOCK_OVERHEAD_TOKENS;
          stack.push(b.content);
          break;
        case 'image':
          total += IMAGE_TOKENS;
          break;
        default:
          // ContentBlockMap is open: price an unknown block by its JSON text.
          total += estimateText(JSON.stringify(b));
      }
    }
  }
  return total;
}

export function estimateMessage(m: Message): number {
  return MESSAGE_OVERHEAD_TOKENS + estimateBlocks(m.content);
}

export function estimateMessages(ms: readonly Message[]): number {
  let t = 0;
  for (const m of ms) t += estimateMessage(m);
  return t;
}

/** System prompt and tool schemas: the part of every request that is not history. */
export function estimateHeader(header: Pick<EpochHeader, 'system' | 'tools'> | undefined): number {
  if (!header) return 0;
  let t = header.system ? MESSAGE_OVERHEAD_TOKENS + estimateText(header.system) : 0;
  for (const tool of header.tools ?? []) t += TOOL_SCHEMA_OVERHEAD_TOKENS + estimateText(JSON.stringify(tool));
  return t;
}

/** One surface node, priced. Surface order is authoritative, not seq order. */
export interface NodeTokens {
  seq: number;
  tokens: number;
}

export interface TokenMeasurement {
  /** Tokens the next request would take: header, history and the messages about to enter. */
  tokens: number;
  /** `usage`: anchored on a provider's reported usage; `estimated`: the heuristic throughout. */
  baseline: 'usage' | 'estimated';
  /** The `assistant/message` whose usage anchors the measurement. */
  anchorSeq?: number;
  headerTokens: number;
  /** Heuristic tokens of every current surface node (sum of `nodes`). */
  surfaceTokens: number;
  /** Heuristic tokens of messages not yet on the surface (a step's input at `agent/pre-step`). */
  pendingTokens: number;
  nodes: NodeTokens[];
  contextWindow?: number;
  /** `tokens / contextWindow`, when the window is known. */
  pressure?: number;
}

export interface MeasureOptions {
  /** Messages about to be entered (not on the surface yet). */
  pending?: readonly Message[];
  /** The header the next request will carry; the latest logged one by default. */
  header?: EpochHeader;
  contextWindow?: number;
}

// Events never change once logged, so a node's price is computed once per session.
const priceCache = new WeakMap<Session, Map<number, number>>();

export function nodeTokens(session: Session, seq: number): number {
  let cache = priceCache.get(session);
  if (!cache) priceCache.set(session, (cache = new Map()));
  let t = cache.get(seq);
  if (t === undefined) {
    const e = session.at(seq);
    const m = e ? deriveEventMessage(e) : null;
    t = m ? estimateMessage(m) : 0;
    cache.set(seq, t);
  }
  return t;
}

interface Anchor {
  seq: number;
  /** Seq of the anchoring call's first chunk: its request held exactly the nodes before it. */
  requestSeq: number;
  usage: TokenUsage;
}

/**
 * The latest successful call, if its usage can stand for the current history: no replace since
 * its request was built, and the same system prompt and tools.
 */
function findAnchor(session: Session, header: EpochHeader | undefined): Anchor | undefined {
  const replacements = session.surface.replacements;
  const lastReplace = replacements.length > 0 ? replacements[replacements.length - 1]!.seq : -1;
  for (let seq = session.length - 1; seq > lastReplace; seq--) {
    const e = session.at(seq)!;
    if (e.type !== 'assistant/message') continue;
    const sources = e.sourceEventSeqs;
    if (!e.data.usage || e.data.interrupted || !sources || sources.length === 0) return undefined;
    const requestSeq = Math.min(...sources);
    if (requestSeq <= lastReplace) return undefined;
    if (!headerEquals(headerBefore(session, requestSeq), header)) return undefined;
    return { seq, requestSeq, usage: e.data.usage };
  }
  return undefined;
}

export function measure(session: Session, opts: MeasureOptions = {}): TokenMeasurement {
  const header = opts.header ?? session.requestHeader();
  const headerTokens = estimateHeader(header);
  const nodes: NodeTokens[] = session.surface.nodes.map((seq) => ({ seq, tokens: nodeTokens(session, seq) }));
  const surfaceTokens = nodes.reduce((a, n) => a + n.tokens, 0);
  const pendingTokens = estimateMessages(opts.pending ?? []);
  const anchor = findAnchor(session, header);
  let tokens: number;
  const out: Partial<TokenMeasurement> = {};
  if (anchor) {
    let appended = 0;
    for (const n of nodes) if (n.seq > anchor.requestSeq) appended += n.tokens;
    tokens = totalInputTokens(anchor.usage) + appended + pendingTokens;
    out.anchorSeq = anchor.seq;
  } else {
    tokens = headerTokens + surfaceTokens + pendingTokens;
  }
  const m: TokenMeasurement = {
    tokens,
    baseline: anchor ? 'usage' : 'estimated',
    headerTokens,
    surfaceTokens,
    pendingTokens,
    nodes,
    ...out,
  };
  if (opts.contextWindow !== undefined && opts.contextWindow > 0) {
    m.contextWindow = opts.contextWindow;
    m.pressure = tokens / opts.contextWindow;
  }
  return m;
}
