import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import type { HostDriver } from '../host/host-driver';
import { SCHEMA } from '../schema';
import { HOST_DRIVER, INSTANCE_RUNTIME, LOG_STORE } from '../instance-lifecycle.tokens';
import { type LogStore, selectLines } from './log-store';

export class RequestLogsCommand extends Command<{ file: string }> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly tail: number | null,
    readonly filter: string | null,
    readonly daemon: boolean,
  ) {
    super();
  }
}

/** Refuses unless the requester rents the instance and it is not destroyed (404 `invalid_id`, 403 `not_authorized`). */
export async function checkLogsAccess(
  runtime: ContextRuntime,
  instanceId: number,
  requesterId: number,
): Promise<void> {
  const owner = await liveInstanceOwner(runtime, instanceId);
  if (owner === null) throw new ApiError(404, 'invalid_id', 'invalid instance id');
  if (owner !== requesterId)
    throw new ApiError(403, 'not_authorized', 'not authorized to view logs for this instance');
}

/** The renter of a live (not destroyed) instance, or null. */
export async function liveInstanceOwner(runtime: ContextRuntime, instanceId: number): Promise<number | null> {
  const rows = await runtime.db.query<{ owner_id: number }>(
    `SELECT owner_id FROM ${SCHEMA}.instances WHERE instance_id = $1 AND NOT destroyed`,
    [instanceId],
  );
  return rows[0] ? Number(rows[0].owner_id) : null;
}

/** A fresh result_url file name: 128 random bits, the only key to what it holds (LogStore's retention applies). */
export const resultFileName = (): string => `${randomBytes(16).toString('hex')}.log`;

/** Collects the instance's (or its daemon's) logs from the host, applies tail/filter and uploads them. */
@CommandHandler(RequestLogsCommand)
export class RequestLogsHandler implements ICommandHandler<RequestLogsCommand> {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(HOST_DRIVER) private readonly host: HostDriver,
    @Inject(LOG_STORE) private readonly store: LogStore,
  ) {}

  async execute({
    requesterId,
    instanceId,
    tail,
    filter,
    daemon,
  }: RequestLogsCommand): Promise<{ file: string }> {
    await checkLogsAccess(this.runtime, instanceId, requesterId);
    const lines = await selectLines(await this.host.logs(instanceId, daemon), tail, filter);
    const file = resultFileName();
    await this.store.put(file, lines.length > 0 ? `${lines.join('\n')}\n` : '');
    return { file };
  }
}
