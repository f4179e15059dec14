import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import {
  Command,
  CommandHandler,
  type ICommandHandler,
  type IQueryHandler,
  Query,
  QueryHandler,
} from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  type InstanceDestroyed,
  decimalToMicros,
  microsToDollars,
} from '@rigmarket/contracts';
import {
  causedBy,
  type ContextRuntime,
  type EnvelopeOf,
  type Reactor,
  type Sql,
} from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { SCHEMA } from '../schema';
import { BillingMeter } from './billing-meter';
import { runLedger } from './ledger.handlers';

/** Hours in the month `timescale` counts in (30 days, as the CLI's discount help does). */
const HOURS_PER_MONTH = 720;

/** A renter's instance as marketplace sees it: its renter, whether it still lives, its current rate. */
interface InstanceRow {
  renter_id: number;
  live: boolean;
  rate_per_hour_micros: string | null;
}

/**
 * The caller's instance, or 404 no_such_instance (another account's instances are not told apart from
 * missing ones). `live`: not destroyed (it still holds its row in instance_allocations).
 */
async function ownInstance(sql: Sql, userId: number, instanceId: number): Promise<InstanceRow> {
  const rows = await sql.query<InstanceRow>(
    `SELECT p.renter_id,
            EXISTS (SELECT 1 FROM ${SCHEMA}.instance_allocations a WHERE a.instance_id = p.instance_id) AS live,
            (SELECT o.rate_per_hour_micros::text FROM ${SCHEMA}.billing_periods o
              WHERE o.instance_id = p.instance_id AND o.ended_at IS NULL) AS rate_per_hour_micros
       FROM ${SCHEMA}.billing_periods p WHERE p.instance_id = $1 ORDER BY p.started_at DESC LIMIT 1`,
    [instanceId],
  );
  const row = rows[0];
  if (!row || Number(row.renter_id) !== userId)
    throw ApiError.notFound(`No instance ${instanceId} of this account`, 'no_such_instance');
  return row;
}

/** Months the deposit lasts at the instance's current rate (0 when it costs nothing now). */
function timescale(depositMicros: number, ratePerHourMicros: string | null): number {
  const rate = Number(ratePerHourMicros ?? 0);
  return rate > 0 ? depositMicros / (rate * HOURS_PER_MONTH) : 0;
}

export interface PrepaidAnswer {
  /** Micros. */
  depositMicros: number;
  balanceMicros: number;
  timescale: number;
}

/**
 * `vastai prepay instance ID AMOUNT`: the renter moves AMOUNT of its credit into the instance's deposit
 * (the ledger refuses more than the balance, 402). Rigmarket gives no discount for prepaying: the deposit
 * pays the instance's charges at its own rate, before the account's credit does.
 */
export class PrepayInstanceCommand extends Command<PrepaidAnswer> {
  constructor(
    readonly userId: number,
    readonly instanceId: number,
    readonly amountMicros: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(PrepayInstanceCommand)
export class PrepayInstanceHandler implements ICommandHandler<PrepayInstanceCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(c: PrepayInstanceCommand): Promise<PrepaidAnswer> {
    const instance = await ownInstance(this.runtime.db, c.userId, c.instanceId);
    if (!instance.live) throw ApiError.notFound(`Instance ${c.instanceId} was destroyed`, 'no_such_instance');
    const { state } = await runLedger(
      this.runtime,
      { type: 'PrepayInstance', userId: c.userId, instanceId: c.instanceId, amountMicros: c.amountMicros },
      c.metadata,
    );
    const depositMicros = state.deposits[c.instanceId]?.micros ?? 0;
    return {
      depositMicros,
      balanceMicros: state.balance,
      timescale: timescale(depositMicros, instance.rate_per_hour_micros),
    };
  }
}

export interface DepositView {
  success: true;
  instance_id: number;
  /** What is left, in $. */
  deposit: number;
  prepaid: number;
  drawn: number;
  refunded: number;
  /** The instance was destroyed: its deposit went back to the credit. */
  closed: boolean;
  timescale: number;
  discount_rate: number;
}

/** `vastai show deposit ID`: the instance's deposit (0 when it was never prepaid); 404 for another's. */
export class DepositQuery extends Query<DepositView> {
  constructor(
    readonly userId: number,
    readonly instanceId: number,
  ) {
    super();
  }
}

@QueryHandler(DepositQuery)
export class DepositHandler implements IQueryHandler<DepositQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(q: DepositQuery): Promise<DepositView> {
    const instance = await ownInstance(this.runtime.db, q.userId, q.instanceId);
    const rows = await this.runtime.db.query<{
      deposit: string;
      prepaid: string;
      drawn: string;
      refunded: string;
      closed: boolean;
    }>(
      `SELECT deposit::text, prepaid::text, drawn::text, refunded::text, closed FROM ${SCHEMA}.instance_deposits
        WHERE instance_id = $1 AND user_id = $2`,
      [q.instanceId, q.userId],
    );
    const row = rows[0] ?? { deposit: '0', prepaid: '0', drawn: '0', refunded: '0', closed: false };
    const depositMicros = decimalToMicros(row.deposit);
    return {
      success: true,
      instance_id: q.instanceId,
      deposit: microsToDollars(depositMicros),
      prepaid: microsToDollars(decimalToMicros(row.prepaid)),
      drawn: microsToDollars(decimalToMicros(row.drawn)),
      refunded: microsToDollars(decimalToMicros(row.refunded)),
      closed: row.closed || !instance.live,
      timescale: timescale(depositMicros, instance.rate_per_hour_micros),
      discount_rate: 0,
    };
  }
}

/**
 * The refund rule: when a prepaid instance is destroyed, what it cost up to its destroy is charged (from
 * the deposit first, as every charge), and the rest of the deposit returns to the renter's credit in full
 * (DepositRefunded); the deposit is then closed. A reactor (ADR 0009) on instance-lifecycle's
 * InstanceDestroyed: queued durably, retried, and idempotent (a closed deposit refunds nothing more).
 */
@Injectable()
export class DepositRefundsReactor implements Reactor<InstanceDestroyed>, OnApplicationBootstrap {
  readonly name = 'deposit_refunds';
  readonly sources = [{ context: 'instance', streamType: 'instance' }] as const;
  readonly eventTypes = ['InstanceDestroyed'] as const;

  constructor(
    @Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly meter: BillingMeter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<InstanceDestroyed>): Promise<void> {
    const { instanceId, renter, at } = event.data;
    const open = await this.runtime.db.query(
      `SELECT 1 FROM ${SCHEMA}.instance_deposits WHERE instance_id = $1 AND user_id = $2 AND NOT closed`,
      [instanceId, renter],
    );
    if (open.length === 0) return;
    const due = (await this.meter.due(new Date(at))).filter(
      (d) => d.instanceId === instanceId && d.renterId === renter && d.amountMicros > 0,
    );
    await runLedger(
      this.runtime,
      {
        type: 'CloseDeposit',
        userId: renter,
        instanceId,
        charges: due.map((d) => ({
          instanceId: d.instanceId,
          machineId: d.machineId,
          hostId: d.hostId,
          kind: d.kind,
          amountMicros: d.amountMicros,
          periodStart: d.periodStart,
          periodEnd: d.periodEnd,
        })),
      },
      causedBy(event),
    );
  }
}
