import type { Migration } from '@rigmarket/event-sourcing';

/**
 * instance-lifecycle's own tables: what it knows of the marketplace (machines with their ask,
 * templates), fed by marketplace's public events over the transport, and its instances read model.
 */
export const readModels: Migration = {
  id: '0001-read-models',
  replaces: '0002-instance-read-models',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.market_machines (
        machine_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        num_gpus INTEGER NOT NULL,
        gpu_ram INTEGER NOT NULL,
        public_ipaddr TEXT,
        listed BOOLEAN NOT NULL DEFAULT FALSE,
        ask JSONB
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.market_templates (
        template_id INTEGER PRIMARY KEY,
        hash_id TEXT NOT NULL,
        creator_id INTEGER NOT NULL,
        content JSONB NOT NULL,
        deleted BOOLEAN NOT NULL DEFAULT FALSE
      )`);
    await sql.execute(`CREATE INDEX market_templates_by_hash ON ${s}.market_templates (hash_id)`);
    await sql.execute(`
      CREATE TABLE ${s}.instances (
        instance_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        actual_status TEXT,
        intended_status TEXT NOT NULL,
        label TEXT,
        gpu_name TEXT NOT NULL,
        num_gpus INTEGER NOT NULL,
        dph_total DOUBLE PRECISION NOT NULL,
        start_date DOUBLE PRECISION NOT NULL,
        destroyed BOOLEAN NOT NULL DEFAULT FALSE,
        details JSONB NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX instances_by_owner ON ${s}.instances (owner_id, instance_id) WHERE NOT destroyed`,
    );
    // Keys restricted to one instance (start/stop/destroy of that instance only).
    await sql.execute(`
      CREATE TABLE ${s}.instance_keys (
        key_hash TEXT PRIMARY KEY,
        instance_id INTEGER NOT NULL,
        owner_id INTEGER NOT NULL
      )`);
    await sql.execute(`CREATE SEQUENCE ${s}.instance_ids START 1`);
  },
};
