import type { Migration } from '@rigmarket/event-sourcing';

export const ledger: Migration = {
  id: '0004-ledger',
  replaces: '0005-ledger',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.ledger_entries (
        stream_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        amount DOUBLE PRECISION NOT NULL,
        instance_id INTEGER,
        machine_id INTEGER,
        note TEXT,
        period_start TIMESTAMPTZ,
        period_end TIMESTAMPTZ,
        at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (stream_id, position)
      )`);
    await sql.execute(`CREATE INDEX ledger_entries_by_user ON ${s}.ledger_entries (user_id, kind, at)`);
    await sql.execute(
      `CREATE TABLE ${s}.balances (user_id INTEGER PRIMARY KEY, balance DOUBLE PRECISION NOT NULL, exhausted BOOLEAN NOT NULL DEFAULT FALSE)`,
    );
  },
};
