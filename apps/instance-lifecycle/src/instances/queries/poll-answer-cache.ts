import { createHash } from 'node:crypto';
import type { ReadModelWatch } from '@rigmarket/event-sourcing';
import { FINISHED_SYNC_NOTICE_MS } from '../sync-maintenance-notices';
import type { JoinedInstanceRow } from './instance-rows';

/** At most this many owners' answers are kept (the least recently used goes first). */
export const MAX_CACHED_POLLS = 10_000;
/** At most this many bytes of answers in all... */
export const MAX_CACHED_POLL_BYTES = 64 * 1024 * 1024;
/** ...and an answer larger than this is never kept. */
export const MAX_CACHED_POLL_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * An answer ready to send: its JSON as UTF-8 bytes and its ETag (weak, as Express makes it from the body),
 * both made once, so a cached answer costs neither the encoding nor the hash again.
 */
export interface PollAnswer {
  body: Buffer;
  etag: string;
}

export function pollAnswer(text: string): PollAnswer {
  const body = Buffer.from(text, 'utf8');
  const hash = createHash('sha1').update(body).digest('base64').substring(0, 27);
  return { body, etag: `W/"${body.length.toString(16)}-${hash}"` };
}

interface Entry {
  answer: PollAnswer;
  /** epoch ms at which something the answer shows lapses by the clock (Infinity: never) */
  lapsesAt: number;
}

/**
 * When an answer built from `rows` at `nowMs` stops being what a fresh read would give, by the clock alone
 * (the read models unchanged): the first end of a maintenance window it shows (the query shows a machine's
 * next window whose end is after now; the next one is shown once it ends) and the first moment a sync's
 * finished notice lapses from status_msg (FINISHED_SYNC_NOTICE_MS after its last update). Nothing else in
 * an instance's view depends on the time.
 */
export function answerLapsesAt(rows: readonly JoinedInstanceRow[], nowMs: number): number {
  let at = Infinity;
  for (const row of rows) {
    if (row.mw_end_time !== null && row.mw_end_time !== undefined)
      at = Math.min(at, Number(row.mw_end_time) * 1000);
    if (row.sync_updated_at !== null && row.sync_updated_at !== undefined) {
      const lapse = new Date(row.sync_updated_at).getTime() + FINISHED_SYNC_NOTICE_MS;
      if (lapse > nowMs) at = Math.min(at, lapse);
    }
  }
  return at;
}

/**
 * The poll's answers (GET /api/v0/instances/, the whole JSON text) by owner, kept while the read models the
 * listing reads are unchanged (a read-model watch on `instances`, `market_machines`, `machine_maintenance`
 * and `instance_syncs`: any change, by this process or another, drops every entry) and until something the
 * answer shows lapses by the clock (`answerLapsesAt`). An answer is stored only if the watch's version did
 * not move while it was read (`version` taken before the read), so an entry never predates a committed
 * change; while the watch is not live (PostgreSQL: no LISTEN connection) nothing is served or stored.
 * Bounded by owners (LRU) and by bytes.
 */
export class PollAnswerCache {
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;
  private version: number | null = null;

  constructor(private readonly watch: ReadModelWatch) {}

  /** The version to hand to `store` for a read that starts now (null: do not store). */
  mark(): number | null {
    return this.watch.version();
  }

  get(owner: number, nowMs: number): PollAnswer | undefined {
    if (!this.sync()) return undefined;
    const entry = this.entries.get(owner);
    if (!entry) return undefined;
    this.entries.delete(owner);
    if (nowMs >= entry.lapsesAt) {
      this.bytes -= entry.answer.body.length;
      return undefined;
    }
    this.entries.set(owner, entry);
    return entry.answer;
  }

  store(owner: number, answer: PollAnswer, lapsesAt: number, mark: number | null): void {
    if (mark === null || !this.sync() || mark !== this.version) return;
    const size = answer.body.length;
    if (size > MAX_CACHED_POLL_ANSWER_BYTES) return;
    const old = this.entries.get(owner);
    if (old) {
      this.entries.delete(owner);
      this.bytes -= old.answer.body.length;
    }
    for (const [key, entry] of this.entries) {
      if (this.entries.size < MAX_CACHED_POLLS && this.bytes + size <= MAX_CACHED_POLL_BYTES) break;
      this.entries.delete(key);
      this.bytes -= entry.answer.body.length;
    }
    this.entries.set(owner, { answer, lapsesAt });
    this.bytes += size;
  }

  /** How many answers are kept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Empties the cache if its read models changed since it was filled; false while the watch is not live. */
  private sync(): boolean {
    const current = this.watch.version();
    if (current !== this.version) {
      this.entries.clear();
      this.bytes = 0;
      this.version = current;
    }
    return current !== null;
  }
}
