import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError, DomainError, type InstanceDestroyed } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { ChangeInstanceCommand } from '../instances/change-instance/change-instance.command';
import { instanceDecider, instanceStreamId } from '../instances/instance.decider';
import { defaultJobDecider, defaultJobStreamId } from './default-job.decider';

/** Why a restart waits for a later destroy: the GPUs are still taken, or the host has no credit. */
const NOT_NOW: ReadonlySet<string> = new Set(['offer_unavailable', 'insufficient_credit']);

/**
 * An instance on a machine with a default job was destroyed: if the job's instance was outbid (a rental took
 * its GPUs) and all the GPUs it ran on are free again, the host's job is started again, the same instance
 * with its disk (the start of an outbid instance: its GPUs allocated again at its bid of 0). Not all free yet:
 * nothing now; a later destroy tries again.
 */
@Injectable()
export class DefaultJobRestartReactor implements Reactor<InstanceDestroyed>, OnApplicationBootstrap {
  readonly name = 'restart_default_jobs';
  readonly sources = [{ context: 'instance', streamType: 'instance' }] as const;
  readonly eventTypes = ['InstanceDestroyed'] as const;
  private readonly log = new Logger('DefaultJobRestart');

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly commands: CommandBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<InstanceDestroyed>): Promise<void> {
    const { machineId, instanceId: destroyed } = event.data;
    const { state: job } = await this.runtime.runner.load(defaultJobStreamId(machineId), defaultJobDecider);
    if (job.job === null || job.instanceId === null || job.instanceId === destroyed) return;
    const { state: instance } = await this.runtime.runner.load(
      instanceStreamId(job.instanceId),
      instanceDecider,
    );
    if (instance.status !== 'active' || !instance.outbid) return;
    const metadata = causedBy(event);
    try {
      await this.commands.execute(
        new ChangeInstanceCommand(job.hostId, job.instanceId, { state: 'running' }, metadata),
      );
      this.log.log(`machine ${machineId}: default job instance ${job.instanceId} started again`);
    } catch (error) {
      const code = error instanceof ApiError || error instanceof DomainError ? error.code : undefined;
      if (code === undefined || !NOT_NOW.has(code)) throw error;
    }
  }
}
