import { randomUUID } from 'node:crypto';
import {
  CONTEXT_SCHEMAS,
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  currentSchemaVersion,
  streamTypeOf,
} from '@rigmarket/contracts';
import {
  type ContextDefinition,
  Database,
  type Projection,
  applyProjection,
  applyProjectionBatch,
  coreMigrations,
  runMigrations,
} from '@rigmarket/event-sourcing';

/** One event of a scenario: on the stream `streamId` (its type is the text before the first '-'). */
export type SpecEvent<E extends DomainEvent = DomainEvent> = E extends DomainEvent
  ? {
      streamId: string;
      type: E['type'];
      data: E['data'];
      occurredAt?: string;
      /** Who caused it and from where (default: no actor, correlation `spec`). */
      metadata?: Partial<EventMetadata>;
    }
  : never;

export interface ProjectionSpec {
  given(events: readonly SpecEvent[]): {
    when(...events: SpecEvent[]): {
      /**
       * Runs `query` after the events and expects `rows`. It also checks that the projection is a pure
       * function of its events: replayed from scratch into emptied tables (as a rebuild does), with every
       * event delivered again, applied as one batch (twice), and with the given events applied one by one
       * and then the when events as one batch, it leaves the same rows in every table.
       */
      then(query: string, rows: readonly Record<string, unknown>[]): Promise<void>;
    };
  };
  /** Closes the in-memory database (afterAll). */
  close(): Promise<void>;
}

/**
 * given/when/then for a projection, on PGlite in memory with the context's migrations: given events,
 * when events, then the rows a query reads. One database per spec file; each scenario starts from empty
 * read-model tables. Events are applied as the runtime applies them (`applyProjection`, one transaction
 * each), numbered per stream in the order given.
 */
export function projectionSpec(context: ContextDefinition, projection: Projection): ProjectionSpec {
  const schema = CONTEXT_SCHEMAS[context.context];
  let db: Promise<Database> | undefined;
  const database = (): Promise<Database> => {
    db ??= (async () => {
      const connected = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
      await runMigrations(connected, schema, [...coreMigrations, ...context.migrations]);
      return connected;
    })();
    return db;
  };

  const envelopes = (events: readonly SpecEvent[]): EventEnvelope[] => {
    const positions = new Map<string, number>();
    return events.map((event, index) => {
      const streamType = streamTypeOf(event.streamId);
      const source = projection.sources.find((s) => s.streamType === streamType);
      if (!source)
        throw new Error(`${projection.name} has no source of stream type ${streamType} (${event.streamId})`);
      const streamPosition = (positions.get(event.streamId) ?? 0) + 1;
      positions.set(event.streamId, streamPosition);
      return {
        eventId: randomUUID(),
        type: event.type,
        // Events of today's shape (older versions are upcast before apply, as the runtime does).
        schemaVersion: currentSchemaVersion(source.context, event.type),
        streamId: event.streamId,
        streamType,
        streamPosition,
        globalPosition: String(index + 1),
        occurredAt: event.occurredAt ?? new Date(Date.UTC(2026, 4, 1, 12, 0, index)).toISOString(),
        context: source.context,
        data: event.data,
        metadata: { correlationId: 'spec', causationId: 'spec', ...event.metadata },
      };
    });
  };

  const reset = async (sql: Database): Promise<void> => {
    for (const table of projection.tables) await sql.execute(`DELETE FROM ${table}`);
    await sql.execute(`DELETE FROM ${schema}.projection_stream_positions WHERE projection = $1`, [
      projection.name,
    ]);
  };
  const applyAll = async (sql: Database, all: readonly EventEnvelope[]): Promise<void> => {
    for (const envelope of all)
      await sql.transaction((tx) => applyProjection(tx, schema, projection, envelope));
  };
  const tableRows = async (sql: Database): Promise<Record<string, string[]>> => {
    const result: Record<string, string[]> = {};
    for (const table of projection.tables)
      result[table] = (await sql.query(`SELECT * FROM ${table}`)).map((row) => JSON.stringify(row)).sort();
    return result;
  };

  return {
    given(givenEvents) {
      return {
        when(...whenEvents) {
          return {
            async then(query, rows) {
              const sql = await database();
              const all = envelopes([...givenEvents, ...whenEvents]);
              await reset(sql);
              await applyAll(sql, all);
              expect(await sql.query(query)).toEqual(rows);
              const live = await tableRows(sql);
              // Redelivered (a Kafka rebalance, a relay retry): nothing changes.
              await applyAll(sql, all);
              expect(await tableRows(sql)).toEqual(live);
              // Replayed into emptied tables, as `rigmarket rebuild` does: the same rows.
              await reset(sql);
              await applyAll(sql, all);
              expect(await tableRows(sql)).toEqual(live);
              // All in one batch (applyBatch when the projection has it), then the batch delivered again.
              await reset(sql);
              await sql.transaction((tx) => applyProjectionBatch(tx, schema, projection, all));
              expect(await tableRows(sql)).toEqual(live);
              await sql.transaction((tx) => applyProjectionBatch(tx, schema, projection, all));
              expect(await tableRows(sql)).toEqual(live);
              // The given events one by one, then the when events in one batch (a delivery onto existing rows).
              await reset(sql);
              await applyAll(sql, all.slice(0, givenEvents.length));
              await sql.transaction((tx) =>
                applyProjectionBatch(tx, schema, projection, all.slice(givenEvents.length)),
              );
              expect(await tableRows(sql)).toEqual(live);
            },
          };
        },
      };
    },
    async close() {
      if (db) await (await db).close();
    },
  };
}
