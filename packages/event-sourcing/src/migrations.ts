import type { Database, Sql } from './database';

/** A hand-written SQL migration of one context's schema. */
export interface Migration {
  /**
   * Unique within the context: `<NNNN>-<what>` for an app's migrations (apps/<app>/src/migrations/, one file
   * each, numbered in the order they run), `core-<NNNN>-<what>` for the tables every context has.
   */
  id: string;
  /** The id it was recorded under before it was renumbered: a store that applied that one skips it. */
  replaces?: string;
  up(sql: Sql, schema: string): Promise<void>;
}

/**
 * Throws unless the ids are unique and, per prefix (`core-`, none), numbered strictly upwards in the
 * order given: the order they run in is the order they are listed in.
 */
export function checkMigrationOrder(migrations: readonly Migration[]): void {
  const seen = new Set<string>();
  const last = new Map<string, number>();
  for (const m of migrations) {
    const match = /^(?:([a-z]+)-)?(\d{4})-[a-z0-9-]+$/.exec(m.id);
    if (!match) throw new Error(`migration id ${m.id} is not [<prefix>-]<NNNN>-<name>`);
    const prefix = match[1] ?? '';
    const number = Number(match[2]);
    if (seen.has(m.id) || (m.replaces !== undefined && seen.has(m.replaces)))
      throw new Error(`migration ${m.id} is listed twice`);
    if (number <= (last.get(prefix) ?? 0))
      throw new Error(`migration ${m.id} is numbered at or below the one before it`);
    seen.add(m.id);
    if (m.replaces !== undefined) seen.add(m.replaces);
    last.set(prefix, number);
  }
}

/**
 * Applies a context's pending migrations in the order given (checkMigrationOrder), recording them in
 * `<schema>.migrations` (one migrations table per context). Safe to run from several processes: a
 * transaction-scoped advisory lock keyed by the schema serialises them.
 */
export async function runMigrations(
  db: Database,
  schema: string,
  migrations: readonly Migration[],
): Promise<string[]> {
  checkMigrationOrder(migrations);
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
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      if (migration.replaces !== undefined && done.has(migration.replaces)) {
        // Applied under its former id: recorded under the new one, not run again.
        await sql.execute(`INSERT INTO ${schema}.migrations (id) VALUES ($1)`, [migration.id]);
        continue;
      }
      await migration.up(sql, schema);
      await sql.execute(`INSERT INTO ${schema}.migrations (id) VALUES ($1)`, [migration.id]);
      applied.push(migration.id);
    }
  });
  return applied;
}

/** The event store, outbox and checkpoint tables every context has. */
export const eventStoreMigration: Migration = {
  id: 'core-0001-event-store',
  replaces: '0001-event-store',
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
  id: 'core-0003-snapshots',
  replaces: '0001-snapshots',
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
