import { Database } from './database';
import { type Migration, checkMigrationOrder, runMigrations } from './migrations';

const table = (id: string, name: string, replaces?: string): Migration => ({
  id,
  replaces,
  up: (sql, s) => sql.execute(`CREATE TABLE ${s}.${name} (n INTEGER)`).then(() => undefined),
});

describe('migrations', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  });
  afterAll(async () => {
    await db.close();
  });

  it('refuses two migrations with one number, a number going down, or an id listed twice', () => {
    expect(() => checkMigrationOrder([table('0001-a', 'a'), table('0001-b', 'b')])).toThrow(
      /0001-b is numbered at or below/,
    );
    expect(() => checkMigrationOrder([table('0002-a', 'a'), table('0001-b', 'b')])).toThrow(/0001-b/);
    expect(() => checkMigrationOrder([table('0001-a', 'a'), table('0002-b', 'b', '0001-a')])).toThrow(
      /listed twice/,
    );
    expect(() => checkMigrationOrder([table('core-0001-a', 'a'), table('0001-b', 'b')])).not.toThrow();
  });

  it('runs them in the order listed, and skips one a store applied under its former id', async () => {
    // A store from before the renumbering: 'old-0007-x' applied.
    expect(await runMigrations(db, 'm1', [table('0001-first', 'first'), table('old-0007-x', 'x')])).toEqual([
      '0001-first',
      'old-0007-x',
    ]);
    const renumbered = [
      table('0001-first', 'first'),
      table('0002-x', 'x', 'old-0007-x'),
      table('0003-y', 'y'),
    ];
    // 0002-x is recorded, not run again (its CREATE TABLE would fail); 0003-y runs.
    expect(await runMigrations(db, 'm1', renumbered)).toEqual(['0003-y']);
    const ids = await db.query<{ id: string }>(`SELECT id FROM m1.migrations ORDER BY id`);
    expect(ids.map((r) => r.id)).toEqual(['0001-first', '0002-x', '0003-y', 'old-0007-x']);
    expect(await runMigrations(db, 'm1', renumbered)).toEqual([]);
  });
});
