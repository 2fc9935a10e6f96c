/**
 * The decode baseline every benchmark process shares: `JSON.parse` of each line of a JSONL text
 * after the header, the objects kept (a loader keeps what it decodes too).
 */
export function parseLines(text: string): unknown[] {
  const out: unknown[] = [];
  let start = text.indexOf('\n') + 1;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    if (nl > start) out.push(JSON.parse(text.slice(start, nl)));
    start = nl + 1;
  }
  return out;
}
