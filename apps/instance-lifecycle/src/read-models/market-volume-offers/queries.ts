import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Free GB of a listed, unexpired volume offer as far as instance-lifecycle knows; null when there is none. */
export async function volumeOfferFreeGb(
  sql: Sql,
  volumeOfferId: number,
  nowSeconds: number,
): Promise<number | null> {
  const rows = await sql.query<{ free_gb: number }>(
    `SELECT size_gb - used_gb AS free_gb FROM ${SCHEMA}.market_volume_offers WHERE machine_id = $1 AND listed AND (end_date IS NULL OR end_date > $2)`,
    [volumeOfferId, nowSeconds],
  );
  return rows[0] ? Math.max(0, Number(rows[0].free_gb)) : null;
}
