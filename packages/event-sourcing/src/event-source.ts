import { type ContextName, type EventEnvelope, CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import type { Sql } from './database';
import { EventStore } from './event-store';

/**
 * Where a rebuild reads the events it replays: the port between read models and the contexts that own
 * their source streams (docs/adr/0005-rebuild-in-one-transaction.md). A context's own streams come from
 * its own event store; another context's either from that context's store in the same database
 * (`storeEventSource`: embedded mode, or distributed contexts sharing one PostgreSQL) or from its Kafka
 * topics, which are kept forever (`KafkaEventSource` in packages/messaging: contexts with separate
 * databases).
 */
export interface EventSource {
  /**
   * Hands every event of `streamTypes` of `context` to `onBatch`, in batches, each stream's events in stream
   * order. Resolves with where it stopped (kept as the rebuilt projection's checkpoint for that source).
   */
  replay(
    context: ContextName,
    streamTypes: readonly string[],
    onBatch: (events: EventEnvelope[]) => Promise<void>,
  ): Promise<{ source: string; position: string }>;
}

/** The owning contexts' event stores, read with `sql` (the rebuild's transaction) from the same database. */
export function storeEventSource(sql: Sql, batchSize = 500): EventSource {
  return {
    async replay(context, streamTypes, onBatch) {
      const source = `store:${context}`;
      // A context that never ran in this database (its tables absent) has no events here.
      const [exists] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
        `${CONTEXT_SCHEMAS[context]}.events`,
      ]);
      if (!exists?.found) return { source, position: '0' };
      const store = new EventStore(context, CONTEXT_SCHEMAS[context]);
      let after = '0';
      for (;;) {
        const batch = await store.readAll(sql, after, batchSize, streamTypes);
        if (batch.length === 0) break;
        await onBatch(batch);
        after = batch[batch.length - 1]!.globalPosition;
      }
      return { source, position: after };
    },
  };
}

/**
 * A context's own streams from its store (private streams included), the others' from `remote` when
 * given (Kafka), else from their stores in the same database.
 */
export function contextEventSource(own: ContextName, sql: Sql, remote?: EventSource): EventSource {
  const store = storeEventSource(sql);
  return {
    replay: (context, streamTypes, onBatch) =>
      (context === own || !remote ? store : remote).replay(context, streamTypes, onBatch),
  };
}
