/**
 * What an import could not map onto a dsh event, counted per field. Nothing the source holds is
 * dropped in silence: each kind of loss has a count, a reason and the first source line.
 */
export interface Loss {
  /** What was lost, in the source's terms (`message.usage.service_tier`, `thinking signature`, …). */
  field: string;
  count: number;
  why: string;
  firstLine?: number;
}

export class LossLedger {
  private readonly byField = new Map<string, Loss>();

  add(field: string, why: string, line?: number, n = 1): void {
    const l = this.byField.get(field);
    if (l) {
      l.count += n;
      return;
    }
    this.byField.set(field, { field, count: n, why, ...(line !== undefined ? { firstLine: line } : {}) });
  }

  list(): Loss[] {
    return [...this.byField.values()].map((l) => ({ ...l }));
  }
}
