/**
 * pi-tui measures, wraps and edits text with one shared `Intl.Segmenter` (`getSegmenter()`, which
 * its editor and input also take at load). On Node 20 that segmenter costs time quadratic in the
 * length of the string (src/model/graphemes.ts has the figures), so a pasted or printed line of a
 * few hundred kilobytes froze the chat inside pi-tui's `visibleWidth` and its editor's word wrap.
 * Importing this module gives that shared instance our windowed segmentation: the same clusters,
 * in linear time. An own property on the instance, so no other segmenter is touched.
 */
import { getSegmenter } from '@mariozechner/pi-tui/dist/utils.js';
import { type GraphemeSegment, graphemeSegments } from '../../model/graphemes.js';

const PATCHED = Symbol.for('dsh.windowedSegmenter');

const segmenter = getSegmenter() as Intl.Segmenter & { [PATCHED]?: true };
if (!segmenter[PATCHED]) {
  const whole = (text: string): Intl.Segments => Intl.Segmenter.prototype.segment.call(segmenter, text);
  // pi-tui iterates the result or spreads it; it never calls `containing()`. Iterable again, as
  // the segments object it replaces is.
  const segment = (text: string): Iterable<GraphemeSegment> => ({ [Symbol.iterator]: () => graphemeSegments(String(text), whole) });
  segmenter.segment = segment as unknown as Intl.Segmenter['segment'];
  segmenter[PATCHED] = true;
}
