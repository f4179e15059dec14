import type { Migration } from '@rigmarket/event-sourcing';

/** Each account's environment variables (read model `env_vars`, from the private `env_vars-<userId>` streams), values sealed. */
export const envVars: Migration = {
  id: '0016-env-vars',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.env_vars (
        user_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        value_sealed TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (user_id, name)
      )`);
  },
};
