import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata, type SyncExecutor, type SyncRequested } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hasCloudConnection } from '../read-models/known-cloud-connections/queries';
import { findInstance, onAgentMachine } from '../read-models/known-instances/queries';
import { SYNC_RUNTIME } from '../sync-maintenance.tokens';
import type { CopyJob } from './executor/copy-executor';
import { runSyncCommand, SyncWorkflow } from './sync-workflow';

/** The API's answer for an instance that does not exist or is not the caller's (one answer: no probing). */
export const noSuchInstance = () => new ApiError(404, 'no_such_instance', 'no such instance');

async function ownedInstance(runtime: ContextRuntime, instanceId: number, userId: number): Promise<void> {
  const instance = await findInstance(runtime.db, instanceId);
  if (!instance || instance.ownerId !== userId) throw noSuchInstance();
}

/** A copy to start: the job the executor carries out, before it has an id. */
export type StartSyncRequest = Omit<CopyJob, 'jobId'>;

export class StartSyncCommand extends Command<{ jobId: number }> {
  constructor(
    readonly userId: number,
    readonly request: StartSyncRequest,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * Checks the caller owns every instance involved, decides once who carries the job out, records it, then
 * hands it to the workflow, or leaves it to the host agents: a copy between instances of which one runs on
 * a host-agent machine, or a cloud copy of an instance on one, is carried out by the agents
 * (instance-lifecycle reacts to the SyncRequested), so the two mechanisms never both run one job.
 */
@CommandHandler(StartSyncCommand)
export class StartSyncHandler implements ICommandHandler<StartSyncCommand> {
  constructor(
    @Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly workflow: SyncWorkflow,
  ) {}

  async execute({ userId, request, metadata }: StartSyncCommand): Promise<{ jobId: number }> {
    await ownedInstance(this.runtime, request.instanceId, userId);
    if (request.srcInstanceId !== null) await ownedInstance(this.runtime, request.srcInstanceId, userId);
    // A cloud copy goes to the agents when its instance is on an agent machine (rclone runs there).
    const involved =
      request.kind === 'rclone'
        ? [request.instanceId]
        : request.srcInstanceId !== null
          ? [request.srcInstanceId, request.instanceId]
          : [];
    const executor: SyncExecutor =
      involved.length > 0 && (await onAgentMachine(this.runtime.db, involved)) ? 'agents' : 'platform';
    // A cloud copy the agents run needs a connection of the caller's (another account's is as unknown).
    if (request.kind === 'rclone' && executor === 'agents') {
      const connectionId = Number(request.rclone?.connection);
      if (
        !Number.isSafeInteger(connectionId) ||
        !(await hasCloudConnection(this.runtime.db, userId, connectionId))
      )
        throw new ApiError(
          404,
          'no_such_cloud_connection',
          `No cloud connection ${request.rclone?.connection ?? ''} on your account (vastai show connections lists them)`,
        );
    }
    const jobId = await this.runtime.nextId('sync_job_ids');
    const result = await runSyncCommand(
      this.runtime,
      { type: 'RequestSync', ...request, jobId, ownerId: userId, executor },
      metadata,
    );
    const requested = result.events.find((e) => e.type === 'SyncRequested') as SyncRequested | undefined;
    if (requested && executor === 'platform') this.workflow.launch({ jobId, ...request }, metadata);
    return { jobId };
  }
}

export class CancelSyncCommand extends Command<{ canceledJobId: number | null }> {
  constructor(
    readonly userId: number,
    readonly instanceId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CancelSyncCommand)
export class CancelSyncHandler implements ICommandHandler<CancelSyncCommand> {
  constructor(
    @Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly workflow: SyncWorkflow,
  ) {}

  async execute({
    userId,
    instanceId,
    metadata,
  }: CancelSyncCommand): Promise<{ canceledJobId: number | null }> {
    await ownedInstance(this.runtime, instanceId, userId);
    const result = await runSyncCommand(
      this.runtime,
      { type: 'CancelSync', instanceId, requesterId: userId },
      metadata,
    );
    const canceled = result.events.find((e) => e.type === 'SyncCanceled');
    if (!canceled) return { canceledJobId: null };
    const jobId = (canceled.data as { jobId: number }).jobId;
    this.workflow.abort(jobId);
    return { canceledJobId: jobId };
  }
}
