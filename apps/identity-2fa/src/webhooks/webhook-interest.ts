import { Inject, Injectable } from '@nestjs/common';
import { type ContextRuntime, VersionedAnswerCache } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { SCHEMA } from '../schema';
import type { WebhookEventType } from './webhook-event-types';

const WEBHOOK_ENDPOINTS_TABLE = `${SCHEMA}.webhook_endpoints`;

/**
 * Which webhook types some enabled endpoint subscribes to, read from the webhook_endpoints read model and
 * read again after any change to it (read-model signals: this process's commits at once, other processes'
 * by NOTIFY). The webhooks reactor queues an event only when its type is wanted, so a platform whose
 * accounts have no endpoint for a type does no webhook work for its events (an instance's state change cost
 * identity about five statements otherwise). Until the answer is known (the first read, a change just seen,
 * PostgreSQL's LISTEN connection down) every type counts as wanted. An event delivered in the moment between
 * an endpoint's commit and its signal reaching this process is treated as older than the endpoint.
 */
@Injectable()
export class WebhookInterest {
  private readonly cache: VersionedAnswerCache<'types', ReadonlySet<string>>;
  private reading: Promise<void> | undefined;

  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: Pick<ContextRuntime, 'db'>) {
    this.cache = new VersionedAnswerCache(
      runtime.db.watchReadModels([WEBHOOK_ENDPOINTS_TABLE]),
      { maxEntries: 1, maxSize: 1, maxAnswerSize: 1 },
      () => 1,
    );
  }

  /** Whether some enabled endpoint may want messages of this type (true while that is not known). */
  wants(type: WebhookEventType): boolean {
    const types = this.cache.get('types', Date.now());
    if (types) return types.has(type);
    this.readAgain();
    return true;
  }

  /** Resolves once a read started by `wants` has ended (tests). */
  async settled(): Promise<void> {
    await this.reading;
  }

  private readAgain(): void {
    if (this.reading) return;
    const mark = this.cache.mark();
    if (mark === null) return;
    // A failed read keeps every type wanted; the next event starts another.
    this.reading = this.runtime.db
      .query<{ type: string }>(
        `SELECT DISTINCT unnest(event_types) AS type FROM ${WEBHOOK_ENDPOINTS_TABLE} WHERE enabled AND deleted_at IS NULL`,
      )
      .then((rows) => this.cache.store('types', new Set(rows.map((r) => r.type)), Infinity, mark))
      .catch(() => undefined)
      .finally(() => {
        this.reading = undefined;
      });
  }
}
