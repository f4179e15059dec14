import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AccountCharged } from '@rigmarket/contracts';
import type { ContextRuntime, EnvelopeOf, Reactor } from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { runLedgerCommand } from './ledger.handlers';

/**
 * A recorded AccountCharged -> the host earns the same amount on its own ledger (HostEarned). A reactor
 * (ADR 0009): the charge is queued durably on delivery and the earning appended afterwards, retried
 * until it is; the ledger decider records one earning per charge (its event id), so a redelivery or a
 * rerun after a restart earns nothing more.
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
    const envelope = event;
    if (event.data.hostId === undefined) return;
    const { hostId, instanceId, machineId, amountMicros } = event.data;
    const metadata = { correlationId: envelope.metadata.correlationId, causationId: envelope.eventId };
    await runLedgerCommand(
      this.runtime,
      {
        type: 'RecordEarning',
        userId: hostId,
        chargeId: envelope.eventId,
        instanceId,
        machineId,
        amountMicros,
      },
      metadata,
    );
  }
}
