import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AccountCharged } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { MAX_LEDGER_BATCH } from './ledger.decider';
import { runLedgerCommand } from './ledger.handlers';

/**
 * A recorded AccountCharged -> the host earns the same amount on its own ledger (HostEarned). A reactor
 * (ADR 0009): the charge is queued durably on delivery and the earning appended afterwards, retried
 * until it is; the ledger decider records one earning per charge (its event id), so a redelivery or a
 * rerun after a restart earns nothing more. Queued charges are taken in batches: a host's earnings of a
 * batch are one command on its ledger (`reactBatch`).
 */
@Injectable()
export class HostEarningsReactor implements Reactor<AccountCharged>, OnApplicationBootstrap {
  readonly name = 'host_earnings';
  readonly sources = [{ context: 'marketplace', streamType: 'ledger' }] as const;
  readonly eventTypes = ['AccountCharged'] as const;

  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  wants(event: EnvelopeOf<AccountCharged>): boolean {
    // Charges from before this reactor carry no hostId: their earning was appended with them.
    return event.data.hostId !== undefined;
  }

  async react(event: EnvelopeOf<AccountCharged>): Promise<void> {
    if (event.data.hostId === undefined) return;
    const { hostId, instanceId, machineId, amountMicros } = event.data;
    const metadata = causedBy(event);
    await runLedgerCommand(
      this.runtime,
      {
        type: 'RecordEarning',
        userId: hostId,
        chargeId: event.eventId,
        instanceId,
        machineId,
        amountMicros,
      },
      metadata,
    );
  }

  /**
   * A billing run's charges: one RecordEarnings per host (one transaction on its ledger for all of its
   * charges in the batch) instead of one command per charge. Same events as `react` on each in turn.
   */
  async reactBatch(events: readonly EnvelopeOf<AccountCharged>[]): Promise<void> {
    const byHost = new Map<number, EnvelopeOf<AccountCharged>[]>();
    for (const event of events) {
      const hostId = event.data.hostId;
      if (hostId === undefined) continue;
      const list = byHost.get(hostId) ?? [];
      list.push(event);
      byHost.set(hostId, list);
    }
    for (const [hostId, charges] of byHost)
      for (let i = 0; i < charges.length; i += MAX_LEDGER_BATCH) {
        const chunk = charges.slice(i, i + MAX_LEDGER_BATCH);
        await runLedgerCommand(
          this.runtime,
          {
            type: 'RecordEarnings',
            userId: hostId,
            earnings: chunk.map((e) => ({
              chargeId: e.eventId,
              instanceId: e.data.instanceId,
              machineId: e.data.machineId,
              amountMicros: e.data.amountMicros,
            })),
          },
          causedBy(chunk[0]!),
        );
      }
  }
}
