import type { Database, Sql } from './database';

/** A hand-written SQL migration of one context's schema. */
export interface Migration {
  /** Sortable and unique within the context, e.g. '0001-event-store'. */
  id: string;
  up(sql: Sql, schema: string): Promise<void>;
}

/**
 * Applies a context's pending migrations, each in its own transaction, recording them in
 * `<schema>.migrations` (one migrations table per context). Safe to run from several processes: a
 * transaction-scoped advisory lock keyed by the schema serialises them.
 */
export async function runMigrations(
  db: Database,
  schema: string,
  migrations: readonly Migration[],
): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (sql) => {
    await sql.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`migrations:${schema}`]);
    await sql.execute(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await sql.execute(
      `CREATE TABLE IF NOT EXISTS ${schema}.migrations (id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await sql.query<{ id: string }>(`SELECT id FROM ${schema}.migrations`)).map((r) => r.id),
    );
    for (const migration of [...migrations].sort((a, b) => a.id.localeCompare(b.id))) {
      if (done.has(migration.id)) continue;
      await migration.up(sql, schema);
      await sql.execute(`INSERT INTO ${schema}.migrations (id) VALUES ($1)`, [migration.id]);
      applied.push(migration.id);
    }
  });
  return applied;
}

/** The event store, outbox and checkpoint tables every context has. */
export const eventStoreMigration: Migration = {
  id: '0001-event-store',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.events (
        global_position BIGSERIAL PRIMARY KEY,
        event_id UUID NOT NULL UNIQUE,
        stream_id TEXT NOT NULL,
        stream_type TEXT NOT NULL,
        stream_position INTEGER NOT NULL,
        type TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        data JSONB NOT NULL,
        metadata JSONB NOT NULL,
        occurred_at TIMESTAMPTZ NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        transaction_id XID8 NOT NULL DEFAULT pg_current_xact_id(),
        CONSTRAINT ${s}_events_stream_position UNIQUE (stream_id, stream_position)
      )`);
    await sql.execute(`CREATE INDEX ${s}_events_by_type ON ${s}.events (stream_type, global_position)`);
    await sql.execute(`
      CREATE TABLE ${s}.outbox (
        id BIGSERIAL PRIMARY KEY,
        global_position BIGINT NOT NULL REFERENCES ${s}.events (global_position),
        topic TEXT NOT NULL,
        message_key TEXT NOT NULL,
        envelope JSONB NOT NULL,
        transaction_id XID8 NOT NULL DEFAULT pg_current_xact_id(),
        published_at TIMESTAMPTZ
      )`);
    await sql.execute(`CREATE INDEX ${s}_outbox_unpublished ON ${s}.outbox (id) WHERE published_at IS NULL`);
    await sql.execute(`
      CREATE TABLE ${s}.outbox_relay_lease (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        holder TEXT,
        lease_until TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(
      `INSERT INTO ${s}.outbox_relay_lease (id, holder, lease_until) VALUES (1, NULL, 'epoch')`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.projection_checkpoints (
        projection TEXT NOT NULL,
        version INTEGER NOT NULL,
        source TEXT NOT NULL,
        position TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (projection, version, source)
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.projection_stream_positions (
        projection TEXT NOT NULL,
        stream_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY (projection, stream_id)
      )`);
  },
};

/**
 * Snapshots of streams' folded state (CommandRunner): a cache, never a source of truth. Each row is the
 * state after `version` events of the stream, in the shape `state_version` of its evolver; a row of another
 * shape is ignored and replaced. Deleting any or all rows is always safe (the next command folds again).
 */
export const snapshotsMigration: Migration = {
  id: '0001-snapshots',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.snapshots (
        stream_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        state_version INTEGER NOT NULL,
        state JSONB NOT NULL,
        taken_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
  },
};
