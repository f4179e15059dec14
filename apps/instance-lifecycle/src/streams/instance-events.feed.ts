import type { InstanceEvent } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import {
  type InstanceChangeView,
  UNSENT_EVENTS,
  changeView,
  evolveChange,
  type InstanceChangeState,
} from './instance-changes';

interface FeedRow {
  global_position: string;
  stream_id: string;
  type: string;
  data: InstanceEvent['data'] | string;
  occurred_at: string | Date;
}

export interface FeedPage {
  changes: Array<{ position: string; change: InstanceChangeView }>;
  /** The last position looked at (the cursor for the next page, whether or not it was the caller's). */
  scannedTo: string;
  /** More events may follow at once (the page was full). */
  full: boolean;
}

type PageRow = FeedRow & { owner_id: number | null };

/** Queries in flight per runtime, by position and commit count (one per wake-up, whatever the streams). */
const inFlight = new WeakMap<ContextRuntime, Map<string, Promise<PageRow[]>>>();

/**
 * The context's events after `after` with their instance's renter. Every stream that asks for the same page
 * while the same commits are signalled shares one query: one begun after the last signalled commit sees it.
 */
function sharedPage(runtime: ContextRuntime, after: string, scan: number): Promise<PageRow[]> {
  const pages = inFlight.get(runtime) ?? new Map<string, Promise<PageRow[]>>();
  inFlight.set(runtime, pages);
  const key = `${after}:${scan}:${runtime.commits.count}`;
  const running = pages.get(key);
  if (running) return running;
  const page = runtime.db
    .query<PageRow>(
      `SELECT e.global_position::text AS global_position, e.stream_id, e.type, e.data, e.occurred_at, i.owner_id
         FROM (SELECT global_position, stream_id, stream_type, type, data, occurred_at FROM ${SCHEMA}.events
                WHERE global_position > $1::bigint ORDER BY global_position LIMIT $2) e
         LEFT JOIN ${SCHEMA}.instances i
           ON i.instance_id = CASE WHEN e.stream_type = 'instance' THEN substr(e.stream_id, 10)::bigint END
        ORDER BY e.global_position`,
      [after, scan],
    )
    .finally(() => pages.delete(key));
  pages.set(key, page);
  return page;
}

/**
 * Reads one account's instance changes from the context's event store by global position.
 *
 * No event of a transaction still in flight can be skipped: the context's appends take turns on the hash
 * chain's head from their append to their commit (event-chain.ts), so an event is visible only once every
 * event with a lower position is committed or gone. The feed therefore reads every committed event, not only
 * the "settled" ones, and a reader that goes on from the last position it saw misses nothing.
 */
export class InstanceEventsFeed {
  /** Each instance's change state as of the last event this feed read (folded from its stream at first sight). */
  private readonly states = new Map<string, InstanceChangeState | null>();

  constructor(
    private readonly runtime: ContextRuntime,
    private readonly ownerId: number,
  ) {}

  /** The position of the context's newest event ('0' when there is none). */
  static async head(runtime: ContextRuntime): Promise<string> {
    const rows = await runtime.db.query<{ head: string | null }>(
      `SELECT max(global_position)::text AS head FROM ${SCHEMA}.events`,
    );
    return rows[0]?.head ?? '0';
  }

  /**
   * The caller's instance changes after `after`: at most `scan` events of the context are looked at (so a
   * page costs the same whatever others do), of which the caller's instance events are kept. Streams that
   * read the same page after the same commit share one query (`sharedPage`).
   */
  async read(after: string, scan = 1000): Promise<FeedPage> {
    const rows = await sharedPage(this.runtime, after, scan);
    const changes: FeedPage['changes'] = [];
    for (const row of rows) {
      if (row.owner_id === null || Number(row.owner_id) !== this.ownerId) continue;
      const event = {
        type: row.type,
        data: typeof row.data === 'string' ? (JSON.parse(row.data) as unknown) : row.data,
      } as InstanceEvent;
      const before = this.states.has(row.stream_id)
        ? (this.states.get(row.stream_id) ?? null)
        : await this.foldBefore(row.stream_id, row.global_position);
      const state = evolveChange(before, event);
      this.states.set(row.stream_id, state);
      if (!state || UNSENT_EVENTS.has(row.type)) continue;
      const at =
        row.occurred_at instanceof Date
          ? row.occurred_at.toISOString()
          : new Date(row.occurred_at).toISOString();
      changes.push({
        position: row.global_position,
        change: changeView(Number(row.stream_id.slice('instance-'.length)), row.type, at, state),
      });
    }
    return {
      changes,
      scannedTo: rows.length > 0 ? rows[rows.length - 1]!.global_position : after,
      full: rows.length === scan,
    };
  }

  /** The instance's change state from its events before `position` (the first time the feed sees it). */
  private async foldBefore(streamId: string, position: string): Promise<InstanceChangeState | null> {
    const events = await this.runtime.store.readStream(this.runtime.db, streamId);
    let state: InstanceChangeState | null = null;
    for (const e of events)
      if (BigInt(e.globalPosition) < BigInt(position))
        state = evolveChange(state, { type: e.type, data: e.data } as InstanceEvent);
    return state;
  }
}
