import { createHash } from 'node:crypto';
import { type ReadModelWatch, VersionedAnswerCache } from '@rigmarket/event-sourcing';
import type { Response } from 'express';
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

/**
 * Sends an answer as it is (the route and its fast path alike): Express neither encodes nor hashes it again,
 * and answers 304 to a matching If-None-Match.
 */
export function sendPollAnswer(response: Response, answer: PollAnswer): void {
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('ETag', answer.etag);
  response.send(answer.body);
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
 * answer shows lapses by the clock (`answerLapsesAt`, handed to `store`). An answer is stored only if the
 * watch's version did not move while it was read (`mark()` taken before the read), so an entry never predates
 * a committed change; while the watch is not live (PostgreSQL: no LISTEN connection) nothing is served or
 * stored. Bounded by owners (LRU) and by bytes (the rules: VersionedAnswerCache).
 */
export class PollAnswerCache extends VersionedAnswerCache<number, PollAnswer> {
  constructor(watch: ReadModelWatch) {
    super(
      watch,
      {
        maxEntries: MAX_CACHED_POLLS,
        maxSize: MAX_CACHED_POLL_BYTES,
        maxAnswerSize: MAX_CACHED_POLL_ANSWER_BYTES,
      },
      (answer) => answer.body.length,
    );
  }
}
