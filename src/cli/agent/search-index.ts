/**
 * The search index follows the sessions `dsh run` and `dsh chat` write (src/search/live.ts): a
 * moment after each step or turn ends the log's new lines are indexed, and once more when the log
 * closes. The search layer (and better-sqlite3 with it) is imported when the first update is due,
 * so starting a session never loads it. JSONL store only: `dsh sessions search` reads those logs.
 */
import type { Plugin } from '../../agent/context.js';
import type { OpenSession } from '../../store/index.js';
import type { LiveIndex } from '../../search/live.js';

class Follower {
  private live: Promise<LiveIndex | undefined> | undefined;
  committed = false;

  constructor(
    private readonly index: string,
    private readonly path: string,
  ) {}

  private load(): Promise<LiveIndex | undefined> {
    this.live ??= import('../../search/live.js').then(
      (m) => new m.LiveIndex(this.index, this.path),
      () => undefined,
    );
    return this.live;
  }

  poke(): void {
    void this.load().then((l) => l?.poke());
  }

  /** The last update; the first failure of any update (a busy index is none). */
  async finish(): Promise<Error | undefined> {
    if (!this.committed) return undefined;
    const l = await this.load();
    if (!l) return new Error('the search layer did not load');
    l.close();
    return l.failure;
  }
}

const followers = new WeakMap<OpenSession, Follower>();

/** The plugin that keeps `index` current with `stored`'s log while an agent runs on it. */
export function indexAsWritten(stored: OpenSession, index: string): Plugin {
  return (host) => {
    let f = followers.get(stored);
    if (!f) followers.set(stored, (f = new Follower(index, stored.location)));
    const follower = f;
    return host.session.subscribe((e) => {
      follower.committed = true;
      if (e.type === 'step/end' || e.type === 'turn/end') follower.poke();
    });
  };
}

/** After the log is closed: index what it holds now. Returns a failure worth a warning. */
export async function finishIndex(stored: OpenSession | undefined): Promise<Error | undefined> {
  const f = stored && followers.get(stored);
  if (!f) return undefined;
  followers.delete(stored);
  return f.finish();
}
