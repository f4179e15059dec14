import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { SyncCanceled, SyncRequested } from '@rigmarket/contracts';
import type { ContextRuntime, EnvelopeOf, Reactor } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AgentCopyRelay } from './agent-copy.relay';

/**
 * sync-maintenance's SyncRequested for a copy it left to the host agents (`executor: 'agents'`) -> the relay
 * starts the transfer between the two agents; SyncCanceled -> the relay aborts it. Queued from the delivery
 * and run after it (ADR 0009); both are idempotent (the job's agentcopy stream says whether it ran).
 */
@Injectable()
export class AgentCopyReactor implements Reactor<SyncRequested | SyncCanceled>, OnApplicationBootstrap {
  readonly name = 'agent_copies';
  readonly sources = [{ context: 'sync', streamType: 'sync' }] as const;
  readonly eventTypes = ['SyncRequested', 'SyncCanceled'] as const;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly relay: AgentCopyRelay,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  wants(event: EnvelopeOf<SyncRequested | SyncCanceled>): boolean {
    if (event.type === 'SyncCanceled') return true;
    return (
      event.type === 'SyncRequested' &&
      event.data.executor === 'agents' &&
      event.data.kind === 'copy_direct' &&
      event.data.srcInstanceId !== null
    );
  }

  async react(event: EnvelopeOf<SyncRequested | SyncCanceled>): Promise<void> {
    const metadata = { correlationId: event.metadata.correlationId, causationId: event.eventId };
    if (event.type === 'SyncCanceled') return this.relay.cancel(event.data.jobId);
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
