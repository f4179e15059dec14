import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Machines (extends 0002's table), offers (one row per offer chunk, typed columns so search filters
 * and sorts are plain indexed predicates), templates, and the admins projected from identity.
 */
export const machinesOffersTemplates: Migration = {
  id: '0002-machines-offers-templates',
  replaces: '0003-machines-offers-templates',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE ${s}.machine_ids START 1`);
    await sql.execute(`CREATE SEQUENCE ${s}.template_ids START 1`);
    await sql.execute(`
      ALTER TABLE ${s}.machines
        ADD COLUMN hardware JSONB,
        ADD COLUMN ask JSONB,
        ADD COLUMN verification TEXT NOT NULL DEFAULT 'unverified',
        ADD COLUMN reliability DOUBLE PRECISION NOT NULL DEFAULT 0,
        ADD COLUMN dlperf DOUBLE PRECISION NOT NULL DEFAULT 0,
        ADD COLUMN tflops DOUBLE PRECISION NOT NULL DEFAULT 0,
        ADD COLUMN gpus_allocated INTEGER NOT NULL DEFAULT 0,
        ADD COLUMN registered_at TIMESTAMPTZ,
        ADD COLUMN listed_at TIMESTAMPTZ`);
    await sql.execute(`CREATE INDEX machines_listed_gpu ON ${s}.machines (gpu_name) WHERE listed`);
    await sql.execute(`
      CREATE TABLE ${s}.offers (
        id BIGINT PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        host_id INTEGER NOT NULL,
        num_gpus INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        gpu_ram DOUBLE PRECISION NOT NULL,
        gpu_total_ram DOUBLE PRECISION NOT NULL,
        cpu_name TEXT,
        cpu_cores INTEGER NOT NULL,
        cpu_cores_effective DOUBLE PRECISION NOT NULL,
        cpu_ram DOUBLE PRECISION NOT NULL,
        cpu_ghz DOUBLE PRECISION,
        disk_space DOUBLE PRECISION NOT NULL,
        disk_bw DOUBLE PRECISION,
        disk_name TEXT,
        dph_base DOUBLE PRECISION NOT NULL,
        min_bid DOUBLE PRECISION NOT NULL,
        credit_discount_max DOUBLE PRECISION NOT NULL,
        storage_cost DOUBLE PRECISION NOT NULL,
        inet_up DOUBLE PRECISION NOT NULL,
        inet_down DOUBLE PRECISION NOT NULL,
        inet_up_cost DOUBLE PRECISION NOT NULL,
        inet_down_cost DOUBLE PRECISION NOT NULL,
        reliability DOUBLE PRECISION NOT NULL,
        dlperf DOUBLE PRECISION NOT NULL,
        total_flops DOUBLE PRECISION NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        cuda_max_good DOUBLE PRECISION NOT NULL,
        driver_version TEXT NOT NULL,
        driver_vers BIGINT NOT NULL,
        compute_cap INTEGER NOT NULL,
        pcie_bw DOUBLE PRECISION,
        pci_gen DOUBLE PRECISION,
        direct_port_count INTEGER NOT NULL,
        geolocation TEXT,
        public_ipaddr TEXT,
        hostname TEXT,
        verified BOOLEAN NOT NULL,
        verification TEXT NOT NULL,
        rentable BOOLEAN NOT NULL,
        rented BOOLEAN NOT NULL,
        external BOOLEAN NOT NULL,
        start_date DOUBLE PRECISION,
        end_date DOUBLE PRECISION,
        hosting_type INTEGER NOT NULL
      )`);
    await sql.execute(`CREATE INDEX offers_by_machine ON ${s}.offers (machine_id)`);
    await sql.execute(`CREATE INDEX offers_by_gpu ON ${s}.offers (gpu_name, num_gpus)`);
    // The CLI's default search: verified, rentable, not external, by score (NULLS LAST, as the search sorts).
    await sql.execute(
      `CREATE INDEX offers_by_score ON ${s}.offers (score DESC NULLS LAST, id) WHERE verified AND rentable AND NOT external`,
    );
    await sql.execute(
      `CREATE INDEX offers_by_gpu_score ON ${s}.offers (gpu_name, score DESC NULLS LAST, id) WHERE verified AND rentable AND NOT external`,
    );
    await sql.execute(`CREATE INDEX offers_by_price ON ${s}.offers (dph_base, id)`);
    await sql.execute(`CREATE INDEX offers_by_gpu_ram ON ${s}.offers (gpu_ram)`);
    await sql.execute(`CREATE INDEX offers_by_geolocation ON ${s}.offers (geolocation)`);
    await sql.execute(`
      CREATE TABLE ${s}.templates (
        template_id INTEGER PRIMARY KEY,
        hash_id TEXT NOT NULL UNIQUE,
        creator_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        image TEXT NOT NULL,
        tag TEXT NOT NULL,
        docker_login_repo TEXT NOT NULL,
        jup_direct BOOLEAN NOT NULL,
        ssh_direct BOOLEAN NOT NULL,
        use_ssh BOOLEAN NOT NULL,
        recommended_disk_space DOUBLE PRECISION NOT NULL,
        recommended BOOLEAN NOT NULL DEFAULT FALSE,
        private BOOLEAN NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        count_created INTEGER NOT NULL DEFAULT 0,
        recent_create_date DOUBLE PRECISION,
        content JSONB NOT NULL
      )`);
    await sql.execute(`CREATE INDEX templates_by_creator ON ${s}.templates (creator_id, template_id)`);
    await sql.execute(`CREATE INDEX templates_by_name ON ${s}.templates (name)`);
    await sql.execute(`CREATE TABLE ${s}.admin_users (user_id INTEGER PRIMARY KEY)`);
  },
};
