import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Webhooks (docs/api.md, Webhooks): the endpoints read model (from `webhook-N` streams), the owners of
 * instances (from instance-lifecycle's events, to know whose instance an event is about), and the delivery
 * worker's own tables (deliveries, their attempts, each endpoint's run of failures, accounts whose credit
 * is low), which are written by the reactor and the worker, not rebuilt from events.
 */
export const webhooks: Migration = {
  id: '0012-webhooks',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE ${s}.webhook_endpoint_ids START 1`);
    await sql.execute(`CREATE SEQUENCE ${s}.webhook_delivery_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.webhook_endpoints (
        endpoint_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        url TEXT NOT NULL,
        event_types TEXT[] NOT NULL,
        description TEXT,
        sealed_secret TEXT NOT NULL,
        enabled BOOLEAN NOT NULL,
        disabled_reason TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        deleted_at TIMESTAMPTZ
      )`);
    await sql.execute(
      `CREATE INDEX webhook_endpoints_by_user ON ${s}.webhook_endpoints (user_id, endpoint_id) WHERE deleted_at IS NULL`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.webhook_instance_owners (
        instance_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        destroyed BOOLEAN NOT NULL DEFAULT false
      )`);
    await sql.execute(
      `CREATE INDEX webhook_instance_owners_by_machine ON ${s}.webhook_instance_owners (machine_id) WHERE NOT destroyed`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.webhook_deliveries (
        delivery_id BIGINT PRIMARY KEY,
        endpoint_id INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        attempts_left INTEGER NOT NULL,
        next_attempt_at TIMESTAMPTZ NOT NULL,
        claimed_until TIMESTAMPTZ NOT NULL DEFAULT 'epoch',
        manual BOOLEAN NOT NULL DEFAULT false,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        finished_at TIMESTAMPTZ,
        UNIQUE (endpoint_id, message_id)
      )`);
    await sql.execute(
      `CREATE INDEX webhook_deliveries_due ON ${s}.webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await sql.execute(
      `CREATE INDEX webhook_deliveries_by_endpoint ON ${s}.webhook_deliveries (endpoint_id, delivery_id)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.webhook_attempts (
        delivery_id BIGINT NOT NULL REFERENCES ${s}.webhook_deliveries (delivery_id) ON DELETE CASCADE,
        attempt INTEGER NOT NULL,
        manual BOOLEAN NOT NULL,
        attempted_at TIMESTAMPTZ NOT NULL,
        status_code INTEGER,
        error TEXT,
        response_excerpt TEXT,
        duration_ms INTEGER NOT NULL,
        PRIMARY KEY (delivery_id, attempt)
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.webhook_endpoint_health (
        endpoint_id INTEGER PRIMARY KEY,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        last_success_at TIMESTAMPTZ,
        last_failure_at TIMESTAMPTZ
      )`);
    await sql.execute(
      `CREATE TABLE ${s}.webhook_credit_low (user_id INTEGER PRIMARY KEY, since TIMESTAMPTZ NOT NULL)`,
    );
  },
};
