import type { Migration } from '@rigmarket/event-sourcing';

export const hostCommands: Migration = {
  id: '0012-host-commands',
  replaces: 'host-0001-host-commands',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.host_commands (
        command_id BIGSERIAL PRIMARY KEY,
        instance_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status_msg TEXT,
        instance_key_sealed TEXT,
        event_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        claimed_until TIMESTAMPTZ,
        delivered_at TIMESTAMPTZ
      )`);
    await sql.execute(
      `CREATE INDEX host_commands_pending ON ${s}.host_commands (command_id) WHERE delivered_at IS NULL`,
    );
  },
};
