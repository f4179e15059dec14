import {
  type EventEnvelope,
  type LedgerEvent,
  decimalToMicros,
  microsToDecimal,
  upcast,
} from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';

/** One account whose ledger does not balance. Amounts are exact decimal dollars. */
export interface LedgerImbalance {
  userId: number;
  /** From the ledger events (upcast): credit granted, charges, earnings, transfers out and in, and granted - charged + earned - sent + received. */
  granted: string;
  charged: string;
  earned: string;
  sent: string;
  received: string;
  /** Prepaid into instances' deposits, and what came back from them (drawn for charges, refunded on destroy). */
  prepaid: string;
  returned: string;
  expected: string;
  /** marketplace.balances.balance (null: no row). */
  balance: string | null;
  /** marketplace.ledger_entries: credit - charges + earnings (null: no rows). */
  entries: string | null;
  /** identity.user_credit.credit (null: no row, or identity not in this database). */
  userCredit: string | null;
}

interface Sums {
  granted: number;
  charged: number;
  earned: number;
  sent: number;
  received: number;
  prepaid: number;
  returned: number;
}

const BATCH = 5_000;

/**
 * The ledger balances: for every account, credit granted - charges + earnings (folded from the ledger events,
 * in integer micros) equals its marketplace.balances row, the sum of its marketplace.ledger_entries and, where
 * identity's schema is in the same database, its identity.user_credit row. Answers the accounts that differ
 * (none when the ledger balances). `rigmarket verify` runs it; so do the billing tests.
 */
export async function ledgerImbalances(sql: Sql): Promise<LedgerImbalance[]> {
  const sums = new Map<number, Sums>();
  const of = (userId: number): Sums => {
    let s = sums.get(userId);
    if (!s)
      sums.set(
        userId,
        (s = { granted: 0, charged: 0, earned: 0, sent: 0, received: 0, prepaid: 0, returned: 0 }),
      );
    return s;
  };
  let after = '0';
  for (;;) {
    const rows = await sql.query<{
      global_position: string;
      type: string;
      schema_version: number;
      data: unknown;
    }>(
      `SELECT global_position::text AS global_position, type, schema_version, data FROM marketplace.events
        WHERE stream_type = 'ledger' AND global_position > $1::bigint ORDER BY events.global_position LIMIT ${BATCH}`,
      [after],
    );
    for (const row of rows) {
      const raw = {
        type: row.type,
        schemaVersion: Number(row.schema_version),
        context: 'marketplace',
        data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data,
      } as EventEnvelope;
      const event = upcast(raw) as unknown as LedgerEvent;
      if (event.type === 'CreditGranted') of(event.data.userId).granted += event.data.amountMicros;
      else if (event.type === 'AccountCharged') of(event.data.userId).charged += event.data.amountMicros;
      else if (event.type === 'HostEarned') of(event.data.userId).earned += event.data.amountMicros;
      else if (event.type === 'CreditTransferred') of(event.data.userId).sent += event.data.amountMicros;
      else if (event.type === 'CreditReceived') of(event.data.userId).received += event.data.amountMicros;
      else if (event.type === 'InstancePrepaid') of(event.data.userId).prepaid += event.data.amountMicros;
      else if (event.type === 'DepositDrawn' || event.type === 'DepositRefunded')
        of(event.data.userId).returned += event.data.amountMicros;
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]!.global_position;
  }

  const balances = new Map(
    (
      await sql.query<{ user_id: number; balance: string }>(
        `SELECT user_id, balance FROM marketplace.balances`,
      )
    ).map((r) => [Number(r.user_id), decimalToMicros(r.balance)]),
  );
  const entries = new Map(
    (
      await sql.query<{ user_id: number; total: string }>(
        `SELECT user_id, sum(CASE WHEN kind LIKE 'charge_%' OR kind IN ('transfer_out', 'prepay') THEN -amount ELSE amount END)::text AS total
           FROM marketplace.ledger_entries GROUP BY user_id`,
      )
    ).map((r) => [Number(r.user_id), decimalToMicros(r.total)]),
  );
  const [identity] = await sql.query<{ found: boolean }>(
    `SELECT to_regclass('identity.user_credit') IS NOT NULL AS found`,
  );
  const credits = identity?.found
    ? new Map(
        (
          await sql.query<{ user_id: number; credit: string }>(
            `SELECT user_id, credit FROM identity.user_credit`,
          )
        ).map((r) => [Number(r.user_id), decimalToMicros(r.credit)]),
      )
    : null;

  const users = new Set([...sums.keys(), ...balances.keys(), ...entries.keys(), ...(credits?.keys() ?? [])]);
  const out: LedgerImbalance[] = [];
  for (const userId of [...users].sort((a, b) => a - b)) {
    const s = sums.get(userId) ?? {
      granted: 0,
      charged: 0,
      earned: 0,
      sent: 0,
      received: 0,
      prepaid: 0,
      returned: 0,
    };
    const expected = s.granted - s.charged + s.earned - s.sent + s.received - s.prepaid + s.returned;
    const balance = balances.get(userId);
    const entry = entries.get(userId);
    // identity keeps no row for an account whose ledger never moved its credit.
    const credit = credits ? (credits.get(userId) ?? (expected === 0 ? 0 : undefined)) : undefined;
    const differs =
      (balance ?? 0) !== expected || (entry ?? 0) !== expected || (credits !== null && credit !== expected);
    if (!differs) continue;
    const dec = (m: number | undefined) => (m === undefined ? null : microsToDecimal(m));
    out.push({
      userId,
      granted: microsToDecimal(s.granted),
      charged: microsToDecimal(s.charged),
      earned: microsToDecimal(s.earned),
      sent: microsToDecimal(s.sent),
      received: microsToDecimal(s.received),
      prepaid: microsToDecimal(s.prepaid),
      returned: microsToDecimal(s.returned),
      expected: microsToDecimal(expected),
      balance: dec(balance),
      entries: dec(entry),
      userCredit: credits ? dec(credits.get(userId)) : null,
    });
  }
  return out;
}
