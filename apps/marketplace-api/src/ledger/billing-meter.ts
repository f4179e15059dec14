import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { MAX_LEDGER_AMOUNT_MICROS, refusalCode } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { PeriodicJob } from '../periodic-job';
import { chargeFor } from './ledger.decider';
import { ChargeRenterCommand, ChargeUsageCommand } from './ledger.handlers';

export const BILLING_INTERVAL_MS = Symbol('BILLING_INTERVAL_MS');

/**
 * A renter's charges of one run are recorded this many to a transaction: few enough that the transaction
 * holds the embedded database's single session briefly (other requests wait behind it), many enough that a
 * run costs a few statements per renter rather than a transaction per charge.
 */
export const CHARGES_PER_TRANSACTION = 100;

/** Default: charge every minute (RIGMARKET_BILLING_INTERVAL_MS; 0 turns the timer off, runOnce still works). */
export const DEFAULT_BILLING_INTERVAL_MS = 60_000;

interface DueRow {
  instance_id: number;
  renter_id: number;
  host_id: number;
  machine_id: number;
  kind: 'gpu' | 'storage';
  rate_per_hour_micros: string;
  from_at: Date | string;
  to_at: Date | string;
}

export interface DueCharge {
  instanceId: number;
  renterId: number;
  hostId: number;
  machineId: number;
  kind: 'gpu' | 'storage';
  /** In micros; NaN when the period's rate is no amount the ledger can take (see work). */
  amountMicros: number;
  periodStart: string;
  periodEnd: string;
}

/**
 * Charges renters for what their instances cost since their last charge (hosts earn it through the
 * HostEarningsReactor), from the
 * billing periods that instance-lifecycle's InstanceBillingChanged events open and close. Each charge
 * is an AccountCharged on the renter's ledger stream with its period; the ledger refuses a period that
 * starts before the instance's last charge ended, so two meters (or a retry) never bill twice.
 * `runOnce` charges everything due up to the runtime clock's now and returns what it charged.
 *
 * A run groups the charges by renter: one transaction records up to CHARGES_PER_TRANSACTION of a renter's
 * charges (ChargeRenterCommand), so a run's cost grows with the renters and charges, not a transaction per
 * charge. Each charge still stands alone: one that fails (a rate beyond the limits from before they existed, a
 * database error on one stream) is logged at error with its instance and skipped; the run goes on with the
 * others, and the next run tries the skipped one again.
 */
@Injectable()
export class BillingMeter extends PeriodicJob<DueCharge[]> {
  constructor(
    @Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
    @Inject(BILLING_INTERVAL_MS) intervalMs: number,
  ) {
    super('BillingMeter', intervalMs);
  }

  private readonly log = new Logger('BillingMeter');

  async due(now: Date): Promise<DueCharge[]> {
    const rows = await this.runtime.db.query<DueRow>(
      `SELECT p.instance_id, p.renter_id, p.host_id, p.machine_id, p.kind, p.rate_per_hour_micros,
              GREATEST(p.started_at, COALESCE(b.until, p.started_at)) AS from_at,
              LEAST(COALESCE(p.ended_at, $1::timestamptz), $1::timestamptz) AS to_at
         FROM ${this.runtime.schema}.billing_periods p
         LEFT JOIN ${this.runtime.schema}.instance_charged_until b USING (instance_id)
        WHERE p.rate_per_hour_micros > 0
          AND LEAST(COALESCE(p.ended_at, $1::timestamptz), $1::timestamptz) > GREATEST(p.started_at, COALESCE(b.until, p.started_at))
        ORDER BY p.instance_id, p.started_at`,
      [now.toISOString()],
    );
    return rows.map((r) => {
      const from = new Date(r.from_at);
      const to = new Date(r.to_at);
      return {
        instanceId: Number(r.instance_id),
        renterId: Number(r.renter_id),
        hostId: Number(r.host_id),
        machineId: Number(r.machine_id),
        kind: r.kind,
        amountMicros: chargeFor(Number(r.rate_per_hour_micros), from, to),
        periodStart: from.toISOString(),
        periodEnd: to.toISOString(),
      };
    });
  }

  protected async work(): Promise<DueCharge[]> {
    const now = this.runtime.runner.clock.now();
    const byRenter = new Map<number, DueCharge[]>();
    for (const due of await this.due(now)) {
      // Too small to show yet: left for a later run, which charges the longer period.
      if (due.amountMicros === 0) continue;
      if (!chargeable(due)) {
        this.skipped(due, new Error(BEYOND_LIMIT));
        continue;
      }
      const list = byRenter.get(due.renterId) ?? [];
      list.push(due);
      byRenter.set(due.renterId, list);
    }
    const charged: DueCharge[] = [];
    for (const [renterId, list] of byRenter)
      for (let i = 0; i < list.length; i += CHARGES_PER_TRANSACTION)
        charged.push(...(await this.chargeRenter(renterId, list.slice(i, i + CHARGES_PER_TRANSACTION), now)));
    return charged;
  }

  /**
   * One transaction for a renter's charges. If it fails as a whole (a database error, a charge the ledger
   * refuses), the charges are tried one by one, so that one bad charge holds back no other.
   */
  private async chargeRenter(renterId: number, list: DueCharge[], now: Date): Promise<DueCharge[]> {
    const metadata = {
      correlationId: `billing-${renterId}-${now.toISOString()}`,
      causationId: `billing-run-${now.toISOString()}`,
    };
    try {
      const recorded = await this.commands.execute(new ChargeRenterCommand(renterId, list, metadata));
      const keys = new Set(recorded.map((r) => `${r.instanceId}@${r.periodStart}`));
      return list.filter((due) => keys.has(`${due.instanceId}@${due.periodStart}`));
    } catch (error) {
      this.log.warn(
        `renter ${renterId}: ${list.length} charges in one transaction failed (${String(error)}); charging them one by one`,
      );
    }
    const charged: DueCharge[] = [];
    for (const due of list) {
      try {
        await this.charge(due);
        charged.push(due);
      } catch (error) {
        if (refusalCode(error) === 'already_billed') continue; // another meter was first
        this.skipped(due, error);
      }
    }
    return charged;
  }

  private skipped(due: DueCharge, error: unknown): void {
    this.log.error(
      `instance ${due.instanceId}: charge for ${due.periodStart}..${due.periodEnd} skipped (renter ${due.renterId}): ${String(error)}`,
    );
  }

  private async charge(due: DueCharge): Promise<void> {
    const metadata = {
      correlationId: `billing-${due.instanceId}-${due.periodEnd}`,
      causationId: `billing-${due.instanceId}`,
    };
    await this.commands.execute(
      new ChargeUsageCommand(
        due.renterId,
        due.hostId,
        due.instanceId,
        due.machineId,
        due.kind,
        due.amountMicros,
        due.periodStart,
        due.periodEnd,
        metadata,
      ),
    );
  }
}

const BEYOND_LIMIT = "its rate makes a charge beyond the ledger's limit ($1,000,000,000): not charged";

/** An amount the ledger can take (a rate from before the limits may make one it cannot). */
const chargeable = (due: DueCharge): boolean =>
  Number.isSafeInteger(due.amountMicros) && due.amountMicros <= MAX_LEDGER_AMOUNT_MICROS;
