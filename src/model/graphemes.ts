/**
 * Grapheme clusters of a string of any length, in time linear in its length.
 *
 * Node 20's `Intl.Segmenter` (grapheme granularity) costs time quadratic in the length of the
 * string it is given: on the machine this was written on, 10,000 characters took 45 ms, 40,000
 * took 674 ms and 160,000 took 34.6 s. One long line from a model or a tool (a minified file, a
 * base64 blob) then froze the chat. So a long string is segmented a window at a time: every
 * cluster of a window but its last is final, and the next window starts where that last cluster
 * starts.
 *
 * Why that gives the clusters of the whole string (the property test in
 * test/model/graphemes.test.ts checks it against the segmenter itself): whether a boundary falls
 * between two code points depends on those two and on context to their left that never crosses
 * a boundary (an emoji sequence's ZWJ looks back to its own pictograph; regional indicators pair
 * up counting from the last boundary before them; an Indic conjunct looks back inside its own
 * cluster). A window cut only changes the boundary at the cut, which belongs to the window's last
 * cluster, the one not kept; and a window that starts at a true boundary sees the same left
 * context as the whole string.
 */

/** One cluster, shaped as `Intl.Segmenter`'s segments are (what pi-tui's code reads). */
export interface GraphemeSegment {
  segment: string;
  /** Offset of the cluster in `input`, in UTF-16 code units. */
  index: number;
  input: string;
}

/** Below this length a string is segmented in one go (its cost is still linear there). */
export const GRAPHEME_WINDOW = 2048;

type SegmentFn = (text: string) => Iterable<{ segment: string; index: number }>;

let shared: Intl.Segmenter | undefined;
/** Made on first use: building a segmenter costs start-up time that most commands never need. */
function defaultSegment(text: string): Iterable<{ segment: string; index: number }> {
  shared ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Intl.Segmenter.prototype.segment.call(shared, text);
}

/**
 * The clusters of `text`, in order, each once. `segment` is the underlying whole-string
 * segmentation (an `Intl.Segmenter`'s by default); `window` the window length, for tests.
 */
export function* graphemeSegments(
  text: string,
  segment: SegmentFn = defaultSegment,
  window: number = GRAPHEME_WINDOW,
): Generator<GraphemeSegment> {
  const size = Math.max(2, Math.floor(window));
  let start = 0;
  let grow = size;
  while (start < text.length) {
    let end = Math.min(text.length, start + grow);
    // Never end a window between the halves of a surrogate pair.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end++;
    const slice = start === 0 && end === text.length ? text : text.slice(start, end);
    let last: { segment: string; index: number } | undefined;
    for (const s of segment(slice)) {
      if (last) yield { segment: last.segment, index: start + last.index, input: text };
      last = s;
    }
    if (!last) return;
    if (end === text.length) {
      yield { segment: last.segment, index: start + last.index, input: text };
      return;
    }
    if (last.index === 0) {
      // One cluster fills the window (a letter under thousands of combining marks): widen it.
      grow *= 2;
      continue;
    }
    start += last.index;
    grow = size;
  }
}

/** The clusters of `text` as strings. */
export function graphemeList(text: string): string[] {
  const out: string[] = [];
  for (const g of graphemeSegments(text)) out.push(g.segment);
  return out;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
