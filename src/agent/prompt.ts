/**
 * System prompt sections. The assembled prompt is recorded in `request/header` before each
 * request that uses it, so it is reconstructable from the log like everything else the model sees.
 */
import type { Disposer } from '../hooks/bus.js';

export interface PromptSection {
  name: string;
  /** Lower comes first; ties keep registration order. */
  order?: number;
  render(): string | Promise<string>;
}

export class PromptSections {
  private sections: PromptSection[] = [];

  add(section: PromptSection): Disposer {
    if (this.sections.some((s) => s.name === section.name))
      throw new Error(`a prompt section named "${section.name}" is already registered`);
    this.sections.push(section);
    return () => {
      this.sections = this.sections.filter((s) => s !== section);
    };
  }

  async assemble(): Promise<string> {
    const ordered = this.sections.map((s, i) => ({ s, i })).sort((a, b) => (a.s.order ?? 0) - (b.s.order ?? 0) || a.i - b.i);
    const parts: string[] = [];
    for (const { s } of ordered) {
      const text = (await s.render()).trim();
      if (text) parts.push(text);
    }
    return parts.join('\n\n');
  }
}
