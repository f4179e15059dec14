import { type LedgerEvent, decimalToMicros, ledgerDeltaMicros, microsToDecimal } from '@rigmarket/contracts';
import { type EnvelopeOf, type Sql, defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

type LedgerEnvelope = EnvelopeOf<LedgerEvent>;

/** The ledger entry an event writes (every ledger event but CreditExhausted). */
function entryOf(event: LedgerEnvelope) {
  const common = { instanceId: null, machineId: null, note: null, start: null, end: null };
  switch (event.type) {
    case 'CreditGranted':
      return { ...common, kind: 'credit', note: event.data.note };
    case 'AccountCharged':
      return {
        ...common,
        kind: `charge_${event.data.kind}`,
        instanceId: event.data.instanceId,
        machineId: event.data.machineId,
        start: event.data.periodStart,
        end: event.data.periodEnd,
      };
    case 'HostEarned':
      return {
        ...common,
        kind: 'earning',
        instanceId: event.data.instanceId,
        machineId: event.data.machineId,
      };
    case 'CreditTransferred':
      return { ...common, kind: 'transfer_out', note: `to account ${event.data.recipientId}` };
    case 'CreditReceived':
      return { ...common, kind: 'transfer_in', note: `from account ${event.data.senderId}` };
    case 'InstancePrepaid':
      return { ...common, kind: 'prepay', instanceId: event.data.instanceId, note: 'into the deposit' };
    case 'DepositDrawn':
      return {
        ...common,
        kind: 'deposit_drawn',
        instanceId: event.data.instanceId,
        note: 'charge paid from the deposit',
      };
    case 'DepositRefunded':
      return {
        ...common,
        kind: 'deposit_refund',
        instanceId: event.data.instanceId,
        note: 'deposit refunded on destroy',
      };
    case 'CreditExhausted':
      return undefined;
    default: {
      // A new ledger event must say here what entry it writes, for `apply` and the batch alike.
      const unknown: never = event;
      throw new Error(`ledger projection: no entry for ${(unknown as LedgerEnvelope).type}`);
    }
  }
}

/**
 * A batch of ledger events with three statements: one INSERT of every entry (arrays unnested), and the
 * balances folded here from the rows read FOR UPDATE, event by event in order in integer micros (exact,
 * as the NUMERIC column is) with the same `exhausted` rule as `apply`'s upsert, so the rows equal those of
 * one `apply` per event, then written back with one upsert.
 */
async function applyLedgerBatch(sql: Sql, events: readonly LedgerEnvelope[]): Promise<void> {
  const entries = events.flatMap((event) => {
    const entry = entryOf(event);
    return entry ? [{ event, entry }] : [];
  });
  if (entries.length > 0)
    await sql.execute(
      `INSERT INTO ${SCHEMA}.ledger_entries (stream_id, position, user_id, kind, amount, instance_id, machine_id, note, period_start, period_end, at)
       SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::numeric[], $6::int[], $7::int[],
                            $8::text[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[])`,
      [
        entries.map((e) => e.event.streamId),
        entries.map((e) => e.event.streamPosition),
        entries.map((e) => e.event.data.userId),
        entries.map((e) => e.entry.kind),
        entries.map((e) => microsToDecimal(Math.abs(ledgerDeltaMicros(e.event)))),
        entries.map((e) => e.entry.instanceId),
        entries.map((e) => e.entry.machineId),
        entries.map((e) => e.entry.note ?? null),
        entries.map((e) => e.entry.start),
        entries.map((e) => e.entry.end),
        entries.map((e) => e.event.data.at),
      ],
    );
  const users = [...new Set(events.map((e) => e.data.userId))].sort((a, b) => a - b);
  const rows = await sql.query<{ user_id: number; balance: string; exhausted: boolean }>(
    `SELECT user_id, balance::text AS balance, exhausted FROM ${SCHEMA}.balances WHERE user_id = ANY($1::int[]) ORDER BY user_id FOR UPDATE`,
    [users],
  );
  const balances = new Map(
    rows.map((r) => [Number(r.user_id), { micros: decimalToMicros(r.balance), exhausted: r.exhausted }]),
  );
  const changed = new Set<number>();
  for (const event of events) {
    const userId = event.data.userId;
    const row = balances.get(userId);
    if (event.type === 'CreditExhausted') {
      if (row) {
        row.exhausted = true;
        changed.add(userId);
      }
      continue;
    }
    const delta = ledgerDeltaMicros(event);
    if (row) {
      row.micros += delta;
      row.exhausted = row.exhausted && row.micros <= 0;
    } else balances.set(userId, { micros: delta, exhausted: false });
    changed.add(userId);
  }
  if (changed.size === 0) return;
  const written = [...changed];
  await sql.execute(
    `INSERT INTO ${SCHEMA}.balances (user_id, balance, exhausted)
     SELECT * FROM unnest($1::int[], $2::numeric[], $3::bool[])
     ON CONFLICT (user_id) DO UPDATE SET balance = EXCLUDED.balance, exhausted = EXCLUDED.exhausted`,
    [
      written,
      written.map((u) => microsToDecimal(balances.get(u)!.micros)),
      written.map((u) => balances.get(u)!.exhausted),
    ],
  );
}

export const ledgerProjection = defineProjection<LedgerEvent>({
  name: 'ledger',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.ledger_entries`, `${SCHEMA}.balances`],
  eventTypes: [
    'CreditGranted',
    'AccountCharged',
    'HostEarned',
    'CreditExhausted',
    'CreditTransferred',
    'CreditReceived',
    'InstancePrepaid',
    'DepositDrawn',
    'DepositRefunded',
  ],
  async apply(sql, event) {
    const entry = entryOf(event);
    if (!entry) {
      // CreditExhausted: no entry, the account is marked.
      await sql.execute(`UPDATE ${SCHEMA}.balances SET exhausted = TRUE WHERE user_id = $1`, [
        event.data.userId,
      ]);
      return;
    }
    const signed = ledgerDeltaMicros(event);
    await sql.execute(
      `INSERT INTO ${SCHEMA}.ledger_entries (stream_id, position, user_id, kind, amount, instance_id, machine_id, note, period_start, period_end, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        event.streamId,
        event.streamPosition,
        event.data.userId,
        entry.kind,
        microsToDecimal(Math.abs(signed)),
        entry.instanceId,
        entry.machineId,
        entry.note ?? null,
        entry.start,
        entry.end,
        event.data.at,
      ],
    );
    await sql.execute(
      `INSERT INTO ${SCHEMA}.balances (user_id, balance) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET balance = ${SCHEMA}.balances.balance + EXCLUDED.balance,
         exhausted = ${SCHEMA}.balances.exhausted AND (${SCHEMA}.balances.balance + EXCLUDED.balance) <= 0`,
      [event.data.userId, microsToDecimal(signed)],
    );
  },
  applyBatch: applyLedgerBatch,
});
