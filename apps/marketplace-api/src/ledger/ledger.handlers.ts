import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata, type LedgerEvent } from '@rigmarket/contracts';
import type { CommandBody, CommandResult, ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { chargeAlreadyEarned, chargesAlreadyEarned, transferAlreadyReceived } from './earned-charges';
import {
  type LedgerCommand,
  type LedgerState,
  type UsageCharge,
  ledgerDecider,
  ledgerStreamId,
} from './ledger.decider';

/** A ledger command as callers give it: the runner stamps `at`; `alreadyEarned`/`alreadyReceived` are looked up in its transaction. */
type LedgerCommandBody = LedgerCommand extends infer C
  ? C extends LedgerCommand
    ? Omit<C, 'at' | 'alreadyEarned' | 'alreadyReceived'>
    : never
  : never;

/** Completes a command with what its decision needs from the store (`sql`: the command's transaction). */
async function lookedUp(
  sql: Sql,
  schema: string,
  command: LedgerCommandBody,
): Promise<CommandBody<LedgerCommand>> {
  switch (command.type) {
    case 'RecordEarning':
      return { ...command, alreadyEarned: await chargeAlreadyEarned(sql, schema, command.chargeId) };
    case 'RecordEarnings':
      return {
        ...command,
        alreadyEarned: await chargesAlreadyEarned(
          sql,
          schema,
          command.earnings.map((e) => e.chargeId),
        ),
      };
    case 'ReceiveCredit':
      return { ...command, alreadyReceived: await transferAlreadyReceived(sql, schema, command.transferId) };
    default:
      return command;
  }
}

/** Runs a ledger command on its account's stream: the runner's result (events recorded, state after them). */
export function runLedger(
  runtime: ContextRuntime,
  command: LedgerCommandBody,
  metadata: EventMetadata,
): Promise<CommandResult<LedgerState, LedgerEvent>> {
  return runtime.runner.run(
    ledgerStreamId(command.userId),
    ledgerDecider,
    (sql) => lookedUp(sql, runtime.schema, command),
    metadata,
  );
}

/** runLedger, answering the account's balance after the command (micros). */
export async function runLedgerCommand(
  runtime: ContextRuntime,
  command: LedgerCommandBody,
  metadata: EventMetadata,
): Promise<number> {
  return (await runLedger(runtime, command, metadata)).state.balance;
}

/** Grants credit; answers the balance after it, in micros. */
export class GrantCreditCommand extends Command<{ balance: number }> {
  constructor(
    readonly adminId: number,
    readonly userId: number,
    readonly amountMicros: number,
    readonly note: string | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(GrantCreditCommand)
export class GrantCreditHandler implements ICommandHandler<GrantCreditCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: GrantCreditCommand): Promise<{ balance: number }> {
    const admins = await this.runtime.db.query(`SELECT 1 FROM ${SCHEMA}.admin_users WHERE user_id = $1`, [
      command.adminId,
    ]);
    if (admins.length === 0) throw ApiError.forbidden('Only an admin may grant credit');
    const balance = await runLedgerCommand(
      this.runtime,
      {
        type: 'GrantCredit',
        userId: command.userId,
        amountMicros: command.amountMicros,
        grantedBy: command.adminId,
        note: command.note,
      },
      command.metadata,
    );
    return { balance };
  }
}

/**
 * One billing period of one instance (BillingMeter): the renter is charged. The host's earning of the same
 * amount follows from the recorded AccountCharged (HostEarningsReactor), so it is never lost between two appends.
 */
export class ChargeUsageCommand extends Command<void> {
  constructor(
    readonly renterId: number,
    readonly hostId: number,
    readonly instanceId: number,
    readonly machineId: number,
    readonly kind: 'gpu' | 'storage',
    readonly amountMicros: number,
    readonly periodStart: string,
    readonly periodEnd: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ChargeUsageCommand)
export class ChargeUsageHandler implements ICommandHandler<ChargeUsageCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(c: ChargeUsageCommand): Promise<void> {
    await runLedgerCommand(
      this.runtime,
      {
        type: 'Charge',
        userId: c.renterId,
        instanceId: c.instanceId,
        machineId: c.machineId,
        hostId: c.hostId,
        kind: c.kind,
        amountMicros: c.amountMicros,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
      },
      c.metadata,
    );
  }
}

/**
 * A billing run's charges of one renter (BillingMeter), in one transaction on the renter's ledger: each
 * recorded as ChargeUsageCommand would, a period already billed left out. Answers the charges recorded.
 */
export class ChargeRenterCommand extends Command<UsageCharge[]> {
  constructor(
    readonly renterId: number,
    readonly charges: UsageCharge[],
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ChargeRenterCommand)
export class ChargeRenterHandler implements ICommandHandler<ChargeRenterCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(c: ChargeRenterCommand): Promise<UsageCharge[]> {
    const result = await runLedger(
      this.runtime,
      { type: 'ChargeRun', userId: c.renterId, charges: c.charges },
      c.metadata,
    );
    const recorded = new Set(
      result.decided.flatMap((e) =>
        e.type === 'AccountCharged' ? [`${e.data.instanceId}@${e.data.periodStart}`] : [],
      ),
    );
    return c.charges.filter((charge) => recorded.has(`${charge.instanceId}@${charge.periodStart}`));
  }
}

interface EntryRow {
  kind: string;
  amount: number;
  instance_id: number | null;
  machine_id: number | null;
  note: string | null;
  period_start: Date | string | null;
  period_end: Date | string | null;
  at: Date | string;
}

const epoch = (value: Date | string | null) => (value === null ? null : new Date(value).getTime() / 1000);

export interface LedgerEntryView {
  type: string;
  amount: number;
  instance_id: number | null;
  machine_id: number | null;
  description: string | null;
  start: number | null;
  end: number | null;
  timestamp: number;
}

const toEntry = (r: EntryRow): LedgerEntryView => ({
  type: r.kind,
  amount: Number(r.amount),
  instance_id: r.instance_id === null ? null : Number(r.instance_id),
  machine_id: r.machine_id === null ? null : Number(r.machine_id),
  description: r.note,
  start: epoch(r.period_start),
  end: epoch(r.period_end),
  timestamp: epoch(r.at)!,
});

export class LedgerEntriesQuery extends Query<{ entries: LedgerEntryView[]; balance: number }> {
  constructor(
    readonly userId: number,
    readonly kinds: string[],
  ) {
    super();
  }
}

@QueryHandler(LedgerEntriesQuery)
export class LedgerEntriesHandler implements IQueryHandler<LedgerEntriesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: LedgerEntriesQuery): Promise<{ entries: LedgerEntryView[]; balance: number }> {
    const rows = await this.runtime.db.query<EntryRow>(
      `SELECT kind, amount, instance_id, machine_id, note, period_start, period_end, at FROM ${SCHEMA}.ledger_entries
        WHERE user_id = $1 AND kind = ANY($2::text[]) ORDER BY at DESC, stream_id, position DESC LIMIT 1000`,
      [query.userId, query.kinds],
    );
    const balances = await this.runtime.db.query<{ balance: number }>(
      `SELECT balance FROM ${SCHEMA}.balances WHERE user_id = $1`,
      [query.userId],
    );
    return { entries: rows.map(toEntry), balance: balances[0] ? Number(balances[0].balance) : 0 };
  }
}

/** Which earnings a host reads: one machine or all, and a time range (either end open). */
export interface EarningsFilter {
  machineId: number | null;
  from: Date | null;
  to: Date | null;
}

export class EarningsQuery extends Query<{ entries: LedgerEntryView[]; machines: Record<string, number> }> {
  constructor(
    readonly userId: number,
    readonly filter: EarningsFilter,
  ) {
    super();
  }
}

/**
 * `vastai show earnings [-m ID] [-s START] [-e END]`: the newest 1,000 earnings in the filter, and each
 * machine's total over the whole filter (summed in the database, so totals stay right past the page).
 */
@QueryHandler(EarningsQuery)
export class EarningsHandler implements IQueryHandler<EarningsQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(query: EarningsQuery) {
    const { machineId, from, to } = query.filter;
    const where = `user_id = $1 AND kind = 'earning' AND ($2::int IS NULL OR machine_id = $2)
      AND ($3::timestamptz IS NULL OR at >= $3) AND ($4::timestamptz IS NULL OR at < $4)`;
    const args = [query.userId, machineId, from?.toISOString() ?? null, to?.toISOString() ?? null];
    const rows = await this.runtime.db.query<EntryRow>(
      `SELECT kind, amount, instance_id, machine_id, note, period_start, period_end, at FROM ${SCHEMA}.ledger_entries
        WHERE ${where} ORDER BY at DESC, stream_id, position DESC LIMIT 1000`,
      args,
    );
    const totals = await this.runtime.db.query<{ machine_id: number | null; total: string | number }>(
      `SELECT machine_id, sum(amount) AS total FROM ${SCHEMA}.ledger_entries WHERE ${where} GROUP BY machine_id`,
      args,
    );
    return {
      entries: rows.map(toEntry),
      machines: Object.fromEntries(totals.map((t) => [String(t.machine_id), Number(t.total)])),
    };
  }
}
