import type { Migration } from '@rigmarket/event-sourcing';

/**
 * The accounts' audit log (`GET /api/v0/audit_logs/`, read-models/audit-log): one row per important action,
 * from the events of every context. Keyed by where the event is stored (context, global position), so a
 * rebuild gives the same rows; read newest first per account.
 */
export const auditLog: Migration = {
  id: '0009-audit-log',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.audit_log (
        context TEXT NOT NULL,
        global_position BIGINT NOT NULL,
        user_id INTEGER NOT NULL,
        api_key_id INTEGER,
        ip_address TEXT,
        api_route TEXT,
        event_type TEXT NOT NULL,
        object TEXT NOT NULL,
        args JSONB NOT NULL,
        correlation_id TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (context, global_position)
      )`);
    await sql.execute(
      `CREATE INDEX audit_log_by_user ON ${s}.audit_log (user_id, created_at DESC, context DESC, global_position DESC)`,
    );
  },
};
