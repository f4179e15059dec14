import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export interface CloudConnectionRow {
  connectionId: number;
  userId: number;
  name: string;
  cloudType: string;
  endpoint: string;
  region: string;
  accessKeyHint: string;
  credentialsSealed: string;
  createdAt: Date;
}

interface Row {
  connection_id: number;
  user_id: number;
  name: string;
  cloud_type: string;
  endpoint: string;
  region: string;
  access_key_hint: string;
  credentials_sealed: string;
  created_at: Date | string;
}

const toRow = (r: Row): CloudConnectionRow => ({
  connectionId: Number(r.connection_id),
  userId: Number(r.user_id),
  name: r.name,
  cloudType: r.cloud_type,
  endpoint: r.endpoint,
  region: r.region,
  accessKeyHint: r.access_key_hint,
  credentialsSealed: r.credentials_sealed,
  createdAt: new Date(r.created_at),
});

/** The account's cloud connections, oldest first. */
export async function accountCloudConnections(sql: Sql, userId: number): Promise<CloudConnectionRow[]> {
  const rows = await sql.query<Row>(
    `SELECT * FROM ${SCHEMA}.cloud_connections WHERE user_id = $1 ORDER BY connection_id`,
    [userId],
  );
  return rows.map(toRow);
}

/** One connection of the account; null when it does not exist or is another account's. */
export async function findCloudConnection(
  sql: Sql,
  userId: number,
  connectionId: number,
): Promise<CloudConnectionRow | null> {
  const rows = await sql.query<Row>(
    `SELECT * FROM ${SCHEMA}.cloud_connections WHERE connection_id = $1 AND user_id = $2`,
    [connectionId, userId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}
