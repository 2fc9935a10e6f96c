/**
 * The events of each type by record index (a session's log slot), in log order: how `Session`
 * finds the few events of a type that resume, the inbox or the tracker read without walking
 * every record of a long log. Chunk deltas are not listed (a loaded log holds them as runs, read
 * by walking the log).
 */
export class TypeIndex {
  private readonly byType = new Map<string, number[]>();

  /** Record `record` (appended in log order) as an event of `type`. */
  add(type: string, record: number): void {
    let list = this.byType.get(type);
    if (list === undefined) this.byType.set(type, (list = []));
    list.push(record);
  }

  /** How many events of `type` were recorded. */
  count(type: string): number {
    return this.byType.get(type)?.length ?? 0;
  }

  /** Record indices ≥ `from` of events of the `types`, ascending (the lists merged). */
  *records(types: Iterable<string>, from: number): IterableIterator<number> {
    const lists: number[][] = [];
    const at: number[] = [];
    for (const t of types) {
      const list = this.byType.get(t);
      if (list === undefined) continue;
      lists.push(list);
      at.push(firstAtOrAfter(list, from));
    }
    for (;;) {
      let best = -1;
      for (let i = 0; i < lists.length; i++) {
        if (at[i]! < lists[i]!.length && (best < 0 || lists[i]![at[i]!]! < lists[best]![at[best]!]!)) best = i;
      }
      if (best < 0) return;
      yield lists[best]![at[best]!++]!;
    }
  }

  /** Record indices of events of `type`, last first. */
  *lastFirst(type: string): IterableIterator<number> {
    const list = this.byType.get(type);
    if (list !== undefined) for (let i = list.length - 1; i >= 0; i--) yield list[i]!;
  }
}

/** The first position of sorted `list` holding a value ≥ `x` (`list.length` if none). */
function firstAtOrAfter(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
