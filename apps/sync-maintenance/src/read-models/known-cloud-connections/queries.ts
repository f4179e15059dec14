import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** True when the account has the cloud connection (as far as this context has projected). */
export async function hasCloudConnection(sql: Sql, userId: number, connectionId: number): Promise<boolean> {
  const rows = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${SCHEMA}.known_cloud_connections WHERE connection_id = $1 AND user_id = $2`,
    [connectionId, userId],
  );
  return Number(rows[0]?.n ?? 0) > 0;
}
