import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import { Database, migrateContexts } from '@rigmarket/event-sourcing';
import { migratedClusterKey, migratedClusterPath, writeMigratedCluster } from './migrated-cluster';
import { ALL_CONTEXTS } from './platform';

const SCHEMAS = ALL_CONTEXTS.map((c) => CONTEXT_SCHEMAS[c.context]);

/** The platform's schemas as the catalog describes them, and their rows (times left out). */
const catalogOf = async (db: Database) => {
  const q = (sql: string) => db.query<Record<string, unknown>>(sql, [SCHEMAS]);
  const tables = await q(
    `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
      WHERE table_schema = ANY($1::text[]) AND table_type = 'BASE TABLE' ORDER BY 1`,
  );
  // A time written by a migration (when it ran) is the build's in the copy.
  const untimed = (row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? 'a time' : v]));
  const rows: Record<string, unknown> = {};
  for (const { t } of tables) {
    const table = String(t);
    rows[table] = (await db.query<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY 1`)).map(untimed);
  }
  return {
    columns: await q(
      `SELECT table_schema, table_name, column_name, data_type, column_default, is_nullable
         FROM information_schema.columns WHERE table_schema = ANY($1::text[]) ORDER BY 1, 2, ordinal_position`,
    ),
    indexes: await q(
      `SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = ANY($1::text[]) ORDER BY 1, 2, 3`,
    ),
    constraints: await q(
      `SELECT n.nspname, c.conrelid::regclass::text AS rel, c.conname, pg_get_constraintdef(c.oid) AS def
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = ANY($1::text[]) ORDER BY 1, 2, 3`,
    ),
    sequences: await q(
      `SELECT schemaname, sequencename, last_value::text FROM pg_sequences WHERE schemaname = ANY($1::text[]) ORDER BY 1, 2`,
    ),
    triggers: await q(
      `SELECT n.nspname, t.tgname, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
         JOIN pg_class r ON r.oid = t.tgrelid JOIN pg_namespace n ON n.oid = r.relnamespace
        WHERE NOT t.tgisinternal AND n.nspname = ANY($1::text[]) ORDER BY 1, 2`,
    ),
    functions: await q(
      `SELECT n.nspname, p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
         JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY($1::text[]) ORDER BY 1, 2`,
    ),
    rows,
  };
};

/**
 * The cluster the build keeps with every migration applied (migrated-cluster.ts): a first start from it has
 * the same schemas, rows and sequences as one that ran the migrations, and finds none left to run; a damaged
 * copy does not stop a first start.
 */
describe('the migrated cluster of a first start (PGlite)', () => {
  let folder: string;
  const open: Database[] = [];
  const connect = async (dataDir: string, firstCluster?: string) => {
    const db = await Database.connect({ kind: 'pglite', dataDir, firstCluster });
    open.push(db);
    return db;
  };

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'rigmarket-migrated-cluster-'));
  });
  afterAll(async () => {
    for (const db of open) await db.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('starts with every migration applied, equal to a start that migrated', async () => {
    const copy = await writeMigratedCluster(folder);
    expect(copy).toBe(migratedClusterPath(folder));

    const fromCopy = await connect(join(folder, 'from-copy'), copy);
    expect(await migrateContexts(fromCopy, ALL_CONTEXTS)).toEqual(ALL_CONTEXTS.map(() => []));

    const migrated = await connect(join(folder, 'migrated'));
    const applied = await migrateContexts(migrated, ALL_CONTEXTS);
    expect(applied.every((ids) => ids.length > 0)).toBe(true);

    const expected = await catalogOf(migrated);
    expect(expected.columns.length).toBeGreaterThan(100);
    expect(await catalogOf(fromCopy)).toEqual(expected);
  }, 120_000);

  it('names the migrations it holds: another migration gives another file', () => {
    const changed = ALL_CONTEXTS.map((c, i) =>
      i === 0
        ? {
            ...c,
            migrations: [...c.migrations, { id: '9999-next', up: async () => undefined }],
          }
        : c,
    );
    expect(migratedClusterKey(changed)).not.toBe(migratedClusterKey());
    expect(migratedClusterKey([...ALL_CONTEXTS])).toBe(migratedClusterKey());
  });

  it('starts from the fresh cluster when the copy is damaged, and migrates', async () => {
    const damaged = join(folder, 'damaged.tar.gz');
    writeFileSync(damaged, 'not a cluster');
    const db = await connect(join(folder, 'from-damaged'), damaged);
    const applied = await migrateContexts(db, ALL_CONTEXTS);
    expect(applied.every((ids) => ids.length > 0)).toBe(true);
  }, 120_000);
});
