import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { SyncCanceled, SyncRequested } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { cloudCopyOf } from '../cloud-connections/cloud-copy-order';
import type { EnvVarBox } from '../env-vars/env-var-box';
import { ENV_VAR_BOX, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { AgentCopyRelay } from './agent-copy.relay';

/**
 * sync-maintenance's SyncRequested for a copy it left to the host agents (`executor: 'agents'`) -> the relay
 * starts the transfer between the two agents, or a cloud copy on the instance's agent with the owner's
 * cloud connection (opened here: the credentials are in no event); SyncCanceled -> the relay aborts it. Queued from the delivery
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
    @Inject(ENV_VAR_BOX) private readonly box: EnvVarBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  wants(event: EnvelopeOf<SyncRequested | SyncCanceled>): boolean {
    if (event.type === 'SyncCanceled') return true;
    if (event.type !== 'SyncRequested' || event.data.executor !== 'agents') return false;
    const d = event.data;
    return (
      (d.kind === 'copy_direct' && d.srcInstanceId !== null) || (d.kind === 'rclone' && d.rclone !== null)
    );
  }

  async react(event: EnvelopeOf<SyncRequested | SyncCanceled>): Promise<void> {
    const metadata = causedBy(event);
    if (event.type === 'SyncCanceled') return this.relay.cancel(event.data.jobId);
    const d = event.data;
    if (d.kind === 'rclone' && d.rclone) {
      const job = { jobId: d.jobId, instanceId: d.instanceId, srcInstanceId: d.instanceId };
      const cloud = await cloudCopyOf(this.runtime.db, this.box, d.ownerId, d.srcPath, d.dstPath, d.rclone);
      return this.relay.start({ ...job, srcPath: d.srcPath, dstPath: d.dstPath, cloud }, metadata);
    }
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
