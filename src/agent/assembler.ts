/**
 * Assembles one attempt's stream chunks into content blocks. Blocks come out
 * in block-index order; a `block-end` carries the authoritative block. On a `max-tokens` finish
 * every tool-call block is dropped (its arguments may be cut off: unsafe to execute), with the
 * matching replay-state entries. `interruptedBlocks()` is what a cancel mid-stream keeps: the
 * visible text and reasoning streamed so far, never tool calls.
 */
import type { ContentBlock, ReplayState } from '../model/message.js';
import type { FinishReason, StreamChunk } from '../model/stream.js';
import type { TokenUsage } from '../model/usage.js';

interface Open {
  type: 'text' | 'reasoning' | 'tool-call';
  text: string;
  id?: string;
  name?: string;
  final?: ContentBlock;
}

export class BlockAssembler {
  private readonly blocksByIndex = new Map<number, Open>();
  usage: TokenUsage | undefined;
  finish: FinishReason | undefined;
  replayState: ReplayState | undefined;

  push(chunk: StreamChunk): void {
    switch (chunk.type) {
      case 'block-start':
        this.blocksByIndex.set(chunk.index, { type: chunk.blockType, text: '' });
        return;
      case 'text-delta':
      case 'reasoning-delta':
        this.open(chunk.index, chunk.type === 'text-delta' ? 'text' : 'reasoning').text += chunk.text;
        return;
      case 'tool-call-delta': {
        const b = this.open(chunk.index, 'tool-call');
        b.text += chunk.argumentsDelta;
        b.id = chunk.id;
        if (chunk.name !== undefined) b.name = chunk.name;
        return;
      }
      case 'block-end': {
        const b = this.blocksByIndex.get(chunk.index) ?? { type: blockKind(chunk.block), text: '' };
        b.final = chunk.block;
        this.blocksByIndex.set(chunk.index, b);
        return;
      }
      case 'usage':
        this.usage = chunk.usage;
        return;
      case 'finish':
        this.finish = chunk.reason;
        if (chunk.replayState !== undefined) this.replayState = chunk.replayState;
        return;
    }
  }

  private open(index: number, type: Open['type']): Open {
    let b = this.blocksByIndex.get(index);
    if (!b) {
      b = { type, text: '' };
      this.blocksByIndex.set(index, b);
    }
    return b;
  }

  private ordered(): Open[] {
    return [...this.blocksByIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  }

  /** The assembled content of a finished attempt. */
  blocks(): { content: ContentBlock[]; replayState?: ReplayState } {
    const all = this.ordered().map((b) => b.final ?? fromOpen(b));
    const maxTokens = this.finish?.kind === 'max-tokens';
    const keep = all.map((b) => !(maxTokens && b.type === 'tool-call'));
    const content = all.filter((_, i) => keep[i]);
    const out: { content: ContentBlock[]; replayState?: ReplayState } = { content };
    if (this.replayState) {
      const rs: ReplayState = { ...this.replayState };
      if (maxTokens && Array.isArray(rs.blocks) && rs.blocks.length === all.length) rs.blocks = rs.blocks.filter((_, i) => keep[i]);
      out.replayState = rs;
    }
    return out;
  }

  /** Visible text and reasoning streamed so far (for an interrupted message); no tool calls. */
  interruptedBlocks(): ContentBlock[] {
    const out: ContentBlock[] = [];
    for (const b of this.ordered()) {
      if (b.type === 'tool-call') continue;
      const t = b.final && (b.final.type === 'text' || b.final.type === 'reasoning') ? b.final.text : b.text;
      if (t.trim().length > 0) out.push({ type: b.type, text: t });
    }
    return out;
  }
}

function blockKind(b: ContentBlock): Open['type'] {
  return b.type === 'reasoning' ? 'reasoning' : b.type === 'tool-call' ? 'tool-call' : 'text';
}

function fromOpen(b: Open): ContentBlock {
  if (b.type === 'tool-call') return { type: 'tool-call', id: b.id ?? '', name: b.name ?? '', arguments: b.text };
  return { type: b.type, text: b.text };
}
