/**
 * A session in PostgreSQL, loaded as stored (no crash repair: a turn without `turn/end` may be
 * running on another host) and then followed: the store's tail (LISTEN/NOTIFY plus reads by seq)
 * hands over every row stored after the load, in order and once, and each is decoded and checked
 * like an appended line.
 */
import type { PgStore } from '../../postgres/store.js';
import type { Tail } from '../../postgres/follow.js';
import { GrowingSource } from './growing.js';

export class PgSource extends GrowingSource {
  readonly kind = 'postgres';
  private follower: Tail | undefined;

  static async open(store: PgStore, id: string, opts: { knownTypes?: ReadonlySet<string> } = {}): Promise<PgSource> {
    const load = await store.inspect(id, { repair: false });
    // Line numbers in messages count as in the session's JSONL export: the header is line 1.
    const src = new PgSource(load.location, load, [], load.eventCount + 2, opts.knownTypes);
    src.follower = await store.tail(
      id,
      (rows) => {
        if (rows.length > 0 && src.follow().state === 'following') src.ingest(`${rows.map((r) => r.body).join('\n')}\n`);
      },
      { from: load.eventCount, onError: () => undefined },
    ); // a read that failed is retried by the next notification or poll
    return src;
  }

  override close(): void {
    this.follower?.stop();
    super.close();
  }

  protected override stop(code: string, message: string): void {
    this.follower?.stop();
    super.stop(code, message);
  }
}
