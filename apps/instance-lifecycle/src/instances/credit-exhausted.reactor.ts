import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { EventEnvelope, LedgerEvent } from '@rigmarket/contracts';
import type { ContextRuntime, Reactor } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../instance-lifecycle.read-models';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { runInstanceCommand } from './instances.handlers';

export const CREDIT_EXHAUSTED_MSG =
  'Stopped: the account ran out of credit. Add credit, then start the instance again.';

/**
 * marketplace's CreditExhausted -> every instance of that account meant to run is stopped (compute
 * billing ends; storage goes on until the renter destroys it or adds credit and starts it again).
 * Runs as a reactor: queued from the delivery, carried out after it (see ReactorWorker).
 */
@Injectable()
export class CreditExhaustedReactor implements Reactor, OnApplicationBootstrap {
  readonly name = 'stop_instances_on_credit_exhausted';
  readonly sources = [{ context: 'marketplace', streamType: 'ledger' }] as const;
  private readonly logger = new Logger('CreditExhaustedReactor');

  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.startReactors([this], {
      onError: (reactor, error) => this.logger.warn(`${reactor}: ${String(error)}`),
    });
  }

  wants(event: EventEnvelope): boolean {
    return event.type === 'CreditExhausted';
  }

  async react(envelope: EventEnvelope): Promise<void> {
    const event = { type: envelope.type, data: envelope.data } as LedgerEvent;
    if (event.type !== 'CreditExhausted') return;
    const userId = event.data.userId;
    const running = await this.runtime.db.query<{ instance_id: number }>(
      `SELECT instance_id FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed AND intended_status = 'running' ORDER BY instance_id`,
      [userId],
    );
    const metadata = { correlationId: envelope.metadata.correlationId, causationId: envelope.eventId };
    for (const { instance_id } of running) {
      const instanceId = Number(instance_id);
      // The host's stop goes to host_commands with the intent, carrying why.
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'SetIntendedState', requesterId: userId, state: 'stopped' },
        metadata,
        { stopMsg: CREDIT_EXHAUSTED_MSG },
      );
    }
  }
}
