/**
 * The one plug point between what an agent command draws (tool calls by kind, reasoning) and
 * where it lands. `dsh run` paints blocks on stderr and redraws the last one in place; the chat
 * screen keeps each block as an entry of its transcript and lays it out again for a new width or
 * when the user expands it. Both get the same layouts from the same renderers.
 */

/** A block's lines for a width; `expanded` shows the long form (whole reasoning, longer diffs and output). */
export type BlockLayout = (width: number, expanded: boolean) => string[];

export interface BlockSink {
  /** Draw block `key`, or draw it again with a new layout (a call that now has its result). */
  draw(key: string, layout: BlockLayout): void;
  /** What the block's layout reads changed (more reasoning streamed): a sink that redraws cheaply shows it. */
  update?(key: string): void;
  /** The block will not change again. */
  done?(key: string): void;
}
