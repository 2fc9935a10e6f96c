/** The seq column of printed `dsh log show` timeline lines (detail lines have none). */
export function printedSeqs(text: string): number[] {
  return text
    .split('\n')
    .map((l) => /^\s*(\d+) {2}/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined)
    .map(Number);
}
