import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@rigmarket/testing';
import { Database } from './database';
import { PGlite } from '@electric-sql/pglite';
import {
  type DatabaseFaultError,
  PGLITE_DATABASE,
  PGLITE_START_PARAMS,
  PREPARED_STATEMENTS_KEPT,
  PREPARED_STATEMENT_MAX_AGE_MS,
  builtFreshClusterPath,
  onDatabaseFault,
  pgliteInstance,
} from './pglite-pool';

// Rows of array (and other) types as the app reads them: PGlite, whose array columns the pool parses after
// the query (slimParsers), must return what node-postgres returns for the same SELECT.
const QUERY = `SELECT ARRAY[1, 2]::int[] AS ints, ARRAY['a', 'b,c', 'd"e']::text[] AS texts,
  ARRAY[9007199254740993]::int8[] AS bigs,
  ARRAY['{"k": [1]}'::jsonb] AS docs, ARRAY['2026-01-02T03:04:05.678Z'::timestamptz] AS times,
  ARRAY[true, false] AS flags, NULL::text[] AS missing, ARRAY[]::int[] AS empty,
  ARRAY['7b1c3e0c-9a51-4f3a-8f6c-2b8d7c1e5a90'::uuid] AS ids,
  9007199254740993::int8 AS big, 2.50::numeric AS amount, '{"k": 1}'::jsonb AS doc, $1::text AS param,
  1 AS dup, ARRAY[2] AS dup`;

describe('the embedded pool returns rows as node-postgres does', () => {
  let pglite: Database;
  let postgres: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    pglite = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    const database = await createTestDatabase();
    drop = database.drop;
    postgres = await Database.connect({ kind: 'postgres', url: database.url });
  });
  afterAll(async () => {
    await pglite.close();
    await postgres.close();
    await drop();
  });

  it('arrays of every kind, scalars and a repeated column name (the last one wins)', async () => {
    const [embedded] = await pglite.query(QUERY, ['x']);
    const [server] = await postgres.query(QUERY, ['x']);
    expect(embedded).toEqual(server);
    expect(embedded).toMatchObject({
      ints: [1, 2],
      texts: ['a', 'b,c', 'd"e'],
      bigs: ['9007199254740993'],
      docs: [{ k: [1] }],
      flags: [true, false],
      missing: null,
      empty: [],
      dup: [2],
    });
    // In a transaction too, and through exec (no parameters).
    const inTransaction = await pglite.transaction((sql) => sql.query(QUERY.replace('$1::text', "'x'")));
    expect(inTransaction[0]).toEqual(server);
  });

  it('parameters of every kind reach the engine as node-postgres sends them (multi-byte text, bytes, nulls, long values)', async () => {
    const at = new Date('2026-11-27T06:00:00.123Z');
    const params = [
      at,
      { renter: 'ünïcødé 日本', list: [1, null] },
      ['a', 'b,c', 'd"e', null, 'ü'],
      null,
      Buffer.from([0, 1, 254, 255]),
      true,
      2.5,
      'ß€𝄞'.repeat(300),
      'x'.repeat(70_000),
    ];
    const query = `SELECT $1::timestamptz AS at, $2::jsonb AS doc, $3::text[] AS texts, $4::text AS nothing,
      encode($5::bytea, 'hex') AS bytes, $6::boolean AS flag, $7::float8 AS num, $8::text AS unicode,
      octet_length($8::text) AS unicode_bytes, length($9::text) AS long_length`;
    const [embedded] = await pglite.query(query, params);
    const [server] = await postgres.query(query, params);
    expect(embedded).toEqual(server);
    expect(embedded).toEqual({
      at,
      doc: { renter: 'ünïcødé 日本', list: [1, null] },
      texts: ['a', 'b,c', 'd"e', null, 'ü'],
      nothing: null,
      bytes: '0001feff',
      flag: true,
      num: 2.5,
      unicode: 'ß€𝄞'.repeat(300),
      unicode_bytes: 2700,
      long_length: 70_000,
    });
  });
});

describe('statements the embedded engine keeps parsed', () => {
  // A statement with parameters is parsed once per engine and then only bound (PreparedStatements). What a
  // caller must not notice: stale statements after a schema change, a failed statement kept, or a cache
  // growing the engine's memory without end.
  let db: Database;
  let engine: PGlite;
  const kept = async (text: string): Promise<number> =>
    Number(
      (
        await engine.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`,
          [text],
        )
      ).rows[0]!.n,
    );
  const keptAll = async (): Promise<number> =>
    (await engine.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`)).rows[0]!.n;
  beforeEach(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    engine = await pgliteInstance('memory://');
    await db.query(`CREATE TABLE machines (id int PRIMARY KEY, name text)`);
  });
  afterEach(async () => {
    await db.close();
  });

  it('a statement run again, in and out of transactions and after a rollback, is parsed once and answers each time', async () => {
    const insert = `INSERT INTO machines (id, name) VALUES ($1, $2)`;
    await db.query(insert, [1, 'a']);
    await expect(
      db.transaction(async (sql) => {
        await sql.execute(insert, [2, 'b']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.transaction((sql) => sql.execute(insert, [3, 'c']));
    expect(await db.query(`SELECT id, name FROM machines WHERE id > $1 ORDER BY id`, [0])).toEqual([
      { id: 1, name: 'a' },
      { id: 3, name: 'c' },
    ]);
    expect(await kept(insert)).toBe(1);
  });

  it('a failing statement fails as before and leaves nothing broken: a unique violation, a syntax error', async () => {
    const insert = `INSERT INTO machines (id, name) VALUES ($1, $2)`;
    await db.query(insert, [1, 'a']);
    await expect(db.query(insert, [1, 'again'])).rejects.toMatchObject({ code: '23505' });
    const broken = `SELEC id FROM machines WHERE id = $1`;
    await expect(db.query(broken, [1])).rejects.toMatchObject({ code: '42601' });
    await expect(db.query(broken, [1])).rejects.toMatchObject({ code: '42601' });
    expect(await kept(broken)).toBe(0);
    await db.query(insert, [2, 'b']);
    expect(await db.query(`SELECT count(*)::int AS n FROM machines WHERE id > $1`, [0])).toEqual([{ n: 2 }]);
  });

  it('after a change of columns a statement answers with the new columns, through the pool or behind its back', async () => {
    const select = `SELECT * FROM machines WHERE id = $1`;
    await db.query(`INSERT INTO machines (id, name) VALUES ($1, $2)`, [1, 'a']);
    expect(await db.query(select, [1])).toEqual([{ id: 1, name: 'a' }]);
    await db.query(`ALTER TABLE machines ADD COLUMN gpus int NOT NULL DEFAULT 8`);
    expect(await db.transaction((sql) => sql.query(select, [1]))).toEqual([{ id: 1, name: 'a', gpus: 8 }]);
    // A change the pool did not see (the engine's own connection): the kept statement is parsed afresh.
    await engine.exec(`ALTER TABLE machines ADD COLUMN region text NOT NULL DEFAULT 'eu'`);
    expect(await db.query(select, [1])).toEqual([{ id: 1, name: 'a', gpus: 8, region: 'eu' }]);
  });

  it('a statement kept longer than its age limit is parsed again (its plan made anew), the old one closed', async () => {
    const select = `SELECT name FROM machines WHERE id = $1`;
    const names = async (): Promise<string[]> =>
      (
        await engine.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE statement = $1`, [
          select,
        ])
      ).rows.map((row) => row.name);
    await db.query(select, [1]);
    const [first] = await names();
    await db.query(select, [1]);
    expect(await names()).toEqual([first]);
    const now = Date.now();
    const later = jest.spyOn(Date, 'now').mockReturnValue(now + PREPARED_STATEMENT_MAX_AGE_MS + 1);
    try {
      await db.query(select, [1]);
      await db.query(`SELECT $1::int AS flushed`, [1]);
    } finally {
      later.mockRestore();
    }
    const [second, ...more] = await names();
    expect(more).toEqual([]);
    expect(second).toBeDefined();
    expect(second).not.toEqual(first);
  });

  it('the engine keeps a bounded number of statements: the least recently used are closed', async () => {
    const often = `SELECT name FROM machines WHERE id = $1`;
    await db.query(often, [1]);
    for (let i = 0; i < PREPARED_STATEMENTS_KEPT + 40; i += 1) {
      await db.query(`SELECT ${i} AS n, $1::int AS id`, [i]);
      if (i % 10 === 0) await db.query(often, [i]);
    }
    // One closed statement may wait for the next statement sent.
    expect(await keptAll()).toBeLessThanOrEqual(PREPARED_STATEMENTS_KEPT + 1);
    expect(await kept(often)).toBe(1);
    expect(await kept(`SELECT 0 AS n, $1::int AS id`)).toBe(0);
  });
});

describe('an embedded engine left unusable', () => {
  // PGlite 0.4 swallows the stack overflow of an infinitely recursive plpgsql function: that statement
  // answered an empty result, the next one "ERRORDATA_STACK_SIZE exceeded" (PANIC), every later one an
  // empty result again, writes included. The pool makes it the fault a WebAssembly trap is.
  it('an infinitely recursive plpgsql function faults the engine: that statement and every later one fail, the fault handlers are told once', async () => {
    const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    const faults: DatabaseFaultError[] = [];
    const unsubscribe = onDatabaseFault((fault) => faults.push(fault));
    try {
      await db.query(`CREATE TABLE kept (n int)`);
      await db.query(
        `CREATE FUNCTION endless(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN endless(n + 1); END $$`,
      );
      // An ordinary error is not a fault.
      await expect(db.query('SELECT 1 / 0')).rejects.toThrow(/division by zero/);
      expect(await db.query('SELECT endless(0) FROM kept')).toEqual([]);
      await expect(db.query('SELECT endless($1)', [1])).rejects.toThrow(/embedded database engine faulted/);
      await expect(db.query('SELECT 1 AS one')).rejects.toThrow(/embedded database engine faulted/);
      await expect(db.query('INSERT INTO kept VALUES ($1)', [1])).rejects.toThrow(
        /embedded database engine faulted/,
      );
      expect(faults).toHaveLength(1);
    } finally {
      unsubscribe();
      await db.close();
    }
    // A fresh engine (the process a supervisor restarts) answers again.
    const fresh = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    try {
      expect(await fresh.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await fresh.close();
    }
  });
});

/** A fresh cluster as the build keeps it (gzipped), after `statements`. */
async function freshClusterTar(statements?: string): Promise<Buffer> {
  const fresh = await PGlite.create({ database: PGLITE_DATABASE, startParams: [...PGLITE_START_PARAMS] });
  try {
    if (statements) await fresh.exec(statements);
    return Buffer.from(await (await fresh.dumpDataDir('gzip')).arrayBuffer());
  } finally {
    await fresh.close();
  }
}

describe('an embedded data folder', () => {
  it('a missing folder gets its cluster from a child process (nothing left beside it, nor what killed starts left), runs with the small shared buffers on template1, and opens again with its rows', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rigmarket-initdb-'));
    const dataDir = join(parent, 'data');
    // The staging folder a start killed before its rename left half made (named by its process, now ended);
    // another folder's, and one of a process that runs (this one's parent), are left alone.
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    mkdirSync(join(parent, `data.initdb-${ended}`));
    writeFileSync(join(parent, `data.initdb-${ended}`, 'PG_VERSION'), '17');
    const kept = [`data.initdb-${process.ppid}`, `elsewhere.initdb-${ended}`];
    for (const name of kept) mkdirSync(join(parent, name));
    try {
      const first = await Database.connect({ kind: 'pglite', dataDir });
      await first.execute(`CREATE TABLE kept (id int PRIMARY KEY)`);
      await first.execute(`INSERT INTO kept VALUES (1), (2)`);
      const [settings] = await first.query<{ db: string; buffers: string }>(
        `SELECT current_database() AS db, current_setting('shared_buffers') AS buffers`,
      );
      expect(settings).toEqual({ db: PGLITE_DATABASE, buffers: '8MB' });
      await first.close();
      // Only the folder itself: the staging folder the child made it in was moved into place.
      expect(readdirSync(parent).sort()).toEqual(['data', ...kept].sort());
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);

      const again = await Database.connect({ kind: 'pglite', dataDir });
      await expect(again.query(`SELECT id FROM kept ORDER BY id`)).resolves.toEqual([{ id: 1 }, { id: 2 }]);
      await again.close();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a folder that exists empty (a mounted volume, or one the operator made) is kept: its cluster is made inside it, and a start killed midway leaves nothing the next one trips on', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rigmarket-initdb-'));
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir);
    const folder = statSync(dataDir).ino;
    try {
      const first = await Database.connect({ kind: 'pglite', dataDir });
      await first.execute(`CREATE TABLE kept (id int PRIMARY KEY)`);
      await first.close();
      // The same folder (a mount point cannot be replaced by a rename), holding the cluster and nothing else.
      expect(statSync(dataDir).ino).toBe(folder);
      expect(readdirSync(parent)).toEqual(['data']);
      expect(readdirSync(dataDir).filter((name) => name.startsWith('.initdb-'))).toEqual([]);
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);

      // A start killed while moving its cluster up: part of it moved, PG_VERSION (moved last) still in its
      // staging folder. The next start empties the folder and makes the cluster again.
      rmSync(dataDir, { recursive: true, force: true });
      mkdirSync(dataDir);
      const ended = spawnSync(process.execPath, ['-e', '']).pid;
      mkdirSync(join(dataDir, `.initdb-${ended}`));
      writeFileSync(join(dataDir, `.initdb-${ended}`, 'PG_VERSION'), '17');
      mkdirSync(join(dataDir, 'base'));
      writeFileSync(join(dataDir, 'base', 'half'), 'x');
      const again = await Database.connect({ kind: 'pglite', dataDir });
      await again.execute(`CREATE TABLE kept (id int PRIMARY KEY)`);
      await again.execute(`INSERT INTO kept VALUES (1)`);
      await again.close();
      expect(existsSync(join(dataDir, 'base', 'half'))).toBe(false);
      expect(readdirSync(dataDir).filter((name) => name.startsWith('.initdb-'))).toEqual([]);
      const reopened = await Database.connect({ kind: 'pglite', dataDir });
      await expect(reopened.query(`SELECT id FROM kept`)).resolves.toEqual([{ id: 1 }]);
      await reopened.close();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a first start unpacks the fresh cluster the build kept when there is one (no initdb), into a folder that works as one initdb made', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rigmarket-initdb-'));
    const dataDir = join(parent, 'data');
    const copy = builtFreshClusterPath();
    try {
      // A copy with a mark in it, so the folder shows where its cluster came from.
      writeFileSync(copy, await freshClusterTar(`CREATE TABLE came_from_the_copy (id int)`));

      const first = await Database.connect({ kind: 'pglite', dataDir });
      await expect(first.query(`SELECT count(*)::int AS n FROM came_from_the_copy`)).resolves.toEqual([
        { n: 0 },
      ]);
      await first.execute(`CREATE TABLE kept (id int PRIMARY KEY)`);
      await first.execute(`INSERT INTO kept VALUES (1)`);
      const [settings] = await first.query<{ db: string; buffers: string }>(
        `SELECT current_database() AS db, current_setting('shared_buffers') AS buffers`,
      );
      expect(settings).toEqual({ db: PGLITE_DATABASE, buffers: '8MB' });
      await first.close();
      expect(readdirSync(parent)).toEqual(['data']);

      const again = await Database.connect({ kind: 'pglite', dataDir });
      await expect(again.query(`SELECT id FROM kept`)).resolves.toEqual([{ id: 1 }]);
      await again.close();
    } finally {
      rmSync(copy, { force: true });
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a first start whose kept fresh cluster is damaged (cut short) runs initdb instead, and leaves nothing beside the folder', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rigmarket-initdb-'));
    const dataDir = join(parent, 'data');
    const copy = builtFreshClusterPath();
    try {
      const tar = await freshClusterTar();
      writeFileSync(copy, tar.subarray(0, Math.floor(tar.length / 2)));

      const db = await Database.connect({ kind: 'pglite', dataDir });
      await db.execute(`CREATE TABLE kept (id int PRIMARY KEY)`);
      await db.execute(`INSERT INTO kept VALUES (1)`);
      await expect(db.query(`SELECT id FROM kept`)).resolves.toEqual([{ id: 1 }]);
      await db.close();
      expect(readdirSync(parent)).toEqual(['data']);
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    } finally {
      rmSync(copy, { force: true });
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
