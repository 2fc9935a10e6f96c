/**
 * Incremental checker for the stream contract of `model/stream.ts`. Adapters are tested against it,
 * and `normalizeStream` runs it on every attempt so a broken adapter ends its attempt with an error
 * finish instead of handing the loop a stream it cannot assemble.
 */
import { CodedError } from '../model/coded-error.js';
import type { StreamBlockType, StreamChunk } from '../model/stream.js';

export const STREAM_GRAMMAR_CODES = [
  'UNKNOWN_CHUNK',
  'INVALID_INDEX',
  'INVALID_BLOCK_TYPE',
  'DUPLICATE_BLOCK_START',
  'DELTA_WITHOUT_OPEN_BLOCK',
  'DELTA_TYPE_MISMATCH',
  'TOOL_CALL_ID_MISMATCH',
  'END_WITHOUT_OPEN_BLOCK',
  'END_TYPE_MISMATCH',
  'DUPLICATE_USAGE',
  'INVALID_FINISH',
  'OPEN_BLOCKS_AT_FINISH',
  'CHUNK_AFTER_FINISH',
  'MISSING_FINISH',
] as const;
export type StreamGrammarCode = (typeof STREAM_GRAMMAR_CODES)[number];

export class StreamGrammarError extends CodedError<StreamGrammarCode> {
  /** Position of the offending chunk in the stream (the chunk count for `MISSING_FINISH`). */
  readonly position: number;
  constructor(code: StreamGrammarCode, message: string, position: number) {
    super(code, `${code} at chunk ${position}: ${message}`);
    this.name = 'StreamGrammarError';
    this.position = position;
  }
}

const BLOCK_TYPES: ReadonlySet<string> = new Set<StreamBlockType>(['text', 'reasoning', 'tool-call']);
const FINISH_KINDS: ReadonlySet<string> = new Set(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error']);
const DELTA_BLOCK_TYPE = {
  'text-delta': 'text',
  'reasoning-delta': 'reasoning',
  'tool-call-delta': 'tool-call',
} as const satisfies Record<string, StreamBlockType>;

interface OpenBlock {
  blockType: StreamBlockType;
  /** The call id of a tool-call block, fixed by its first delta. */
  callId?: string;
}

export interface StreamGrammarOptions {
  /**
   * Accept blocks still open at a `max-tokens` finish. Our adapters always close them, but dsh
   * itself logs a truncated tool call that never got its block-end (real log
   * acp-agent__max-tokens-continue.jsonl), so readers of dsh logs need this leniency.
   */
  allowOpenBlocksAtMaxTokens?: boolean;
}

export class StreamGrammar {
  constructor(private readonly options: StreamGrammarOptions = {}) {}

  private readonly started = new Set<number>();
  private readonly open = new Map<number, OpenBlock>();
  private position = 0;
  private sawUsage = false;
  private sawFinish = false;

  get finished(): boolean {
    return this.sawFinish;
  }

  /** Indexes of blocks started and not yet ended, ascending. */
  openBlocks(): number[] {
    return [...this.open.keys()].sort((a, b) => a - b);
  }

  push(chunk: StreamChunk): void {
    const at = this.position++;
    const fail = (code: StreamGrammarCode, message: string): never => {
      throw new StreamGrammarError(code, message, at);
    };
    if (this.sawFinish) fail('CHUNK_AFTER_FINISH', `${describe(chunk)} after finish`);

    switch (chunk.type) {
      case 'block-start': {
        checkIndex(chunk.index, fail);
        if (!BLOCK_TYPES.has(chunk.blockType)) fail('INVALID_BLOCK_TYPE', `block type ${JSON.stringify(chunk.blockType)}`);
        if (this.started.has(chunk.index)) fail('DUPLICATE_BLOCK_START', `block ${chunk.index} already started`);
        this.started.add(chunk.index);
        this.open.set(chunk.index, { blockType: chunk.blockType });
        return;
      }
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call-delta': {
        checkIndex(chunk.index, fail);
        const block = this.open.get(chunk.index);
        if (!block) return fail('DELTA_WITHOUT_OPEN_BLOCK', `${chunk.type} for block ${chunk.index}, which is not open`);
        const want = DELTA_BLOCK_TYPE[chunk.type];
        if (block.blockType !== want) fail('DELTA_TYPE_MISMATCH', `${chunk.type} for ${block.blockType} block ${chunk.index}`);
        if (chunk.type === 'tool-call-delta') {
          if (block.callId === undefined) block.callId = chunk.id;
          else if (block.callId !== chunk.id) {
            fail('TOOL_CALL_ID_MISMATCH', `block ${chunk.index} is call ${block.callId}, delta says ${chunk.id}`);
          }
        }
        return;
      }
      case 'block-end': {
        checkIndex(chunk.index, fail);
        const block = this.open.get(chunk.index);
        if (!block) return fail('END_WITHOUT_OPEN_BLOCK', `block-end for block ${chunk.index}, which is not open`);
        const endType = chunk.block?.type;
        if (endType !== block.blockType) {
          fail('END_TYPE_MISMATCH', `block ${chunk.index} is ${block.blockType}, block-end carries ${String(endType)}`);
        }
        if (chunk.block.type === 'tool-call' && block.callId !== undefined && chunk.block.id !== block.callId) {
          fail('TOOL_CALL_ID_MISMATCH', `block ${chunk.index} is call ${block.callId}, block-end says ${chunk.block.id}`);
        }
        this.open.delete(chunk.index);
        return;
      }
      case 'usage':
        if (this.sawUsage) fail('DUPLICATE_USAGE', 'a second usage chunk');
        this.sawUsage = true;
        return;
      case 'finish': {
        const kind = chunk.reason?.kind;
        if (!FINISH_KINDS.has(kind)) fail('INVALID_FINISH', `finish kind ${JSON.stringify(kind)}`);
        const failed = kind === 'error' || kind === 'aborted';
        if (failed && typeof (chunk.reason as { failure?: { code?: unknown } }).failure?.code !== 'string') {
          fail('INVALID_FINISH', `${kind} finish without a failure code`);
        }
        // A failed attempt may stop anywhere; a successful one must have assembled every block.
        const lenient = failed || (kind === 'max-tokens' && this.options.allowOpenBlocksAtMaxTokens === true);
        if (!lenient && this.open.size > 0) {
          fail('OPEN_BLOCKS_AT_FINISH', `${kind} finish with open blocks ${this.openBlocks().join(', ')}`);
        }
        this.sawFinish = true;
        return;
      }
      default:
        fail('UNKNOWN_CHUNK', `chunk type ${JSON.stringify((chunk as { type?: unknown }).type)}`);
    }
  }

  /** The stream is over: it must have ended with a finish. */
  end(): void {
    if (!this.sawFinish) throw new StreamGrammarError('MISSING_FINISH', 'stream ended without a finish chunk', this.position);
  }
}

/** Check a complete stream; throws the first violation. */
export function checkStream(chunks: Iterable<StreamChunk>, options?: StreamGrammarOptions): void {
  const grammar = new StreamGrammar(options);
  for (const c of chunks) grammar.push(c);
  grammar.end();
}

function checkIndex(index: unknown, fail: (code: StreamGrammarCode, message: string) => never): void {
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) {
    fail('INVALID_INDEX', `block index ${String(index)} is not a non-negative safe integer`);
  }
}

function describe(chunk: StreamChunk): string {
  return typeof (chunk as { type?: unknown }).type === 'string' ? chunk.type : 'a chunk';
}
