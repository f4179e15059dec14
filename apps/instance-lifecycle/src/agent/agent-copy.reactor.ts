import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { EventEnvelope, SyncEvent } from '@rigmarket/contracts';
import type { ContextRuntime, Reactor } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AgentCopyRelay } from './agent-copy.relay';

/**
 * sync-maintenance's SyncRequested for a copy it left to the host agents (`executor: 'agents'`) -> the relay
 * starts the transfer between the two agents; SyncCanceled -> the relay aborts it. Queued from the delivery
 * and run after it (ADR 0009); both are idempotent (the job's agentcopy stream says whether it ran).
 */
@Injectable()
export class AgentCopyReactor implements Reactor, OnApplicationBootstrap {
  readonly name = 'agent_copies';
  readonly sources = [{ context: 'sync', streamType: 'sync' }] as const;
  private readonly logger = new Logger('AgentCopyReactor');

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly relay: AgentCopyRelay,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.startReactors([this], {
      onError: (reactor, error) => this.logger.warn(`${reactor}: ${String(error)}`),
    });
  }

  wants(envelope: EventEnvelope): boolean {
    const event = { type: envelope.type, data: envelope.data } as SyncEvent;
    if (event.type === 'SyncCanceled') return true;
    return (
      event.type === 'SyncRequested' &&
      event.data.executor === 'agents' &&
      event.data.kind === 'copy_direct' &&
      event.data.srcInstanceId !== null
    );
  }

  async react(envelope: EventEnvelope): Promise<void> {
    const event = { type: envelope.type, data: envelope.data } as SyncEvent;
    const metadata = { correlationId: envelope.metadata.correlationId, causationId: envelope.eventId };
    if (event.type === 'SyncCanceled') return this.relay.cancel(event.data.jobId);
    if (event.type !== 'SyncRequested') return;
    const d = event.data;
    if (d.srcInstanceId === null) return;
    await this.relay.start(
      {
        jobId: d.jobId,
        instanceId: d.instanceId,
        srcInstanceId: d.srcInstanceId,
        srcPath: d.srcPath,
        dstPath: d.dstPath,
      },
      metadata,
    );
  }
}
