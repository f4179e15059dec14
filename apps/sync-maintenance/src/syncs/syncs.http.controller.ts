import { Body, Controller, Delete, HttpCode, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  instanceIdOf,
  parseCloudCopyCall,
  requiredPath,
} from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type AuthenticatedKey,
  type Call,
  CallOf,
  RequirePermission,
} from '@rigmarket/http-kit';
import { IsOptional } from 'class-validator';
import { CancelSyncCommand, StartSyncCommand } from './syncs.handlers';
import { ANSWERS, BODIES } from '../sync-maintenance.openapi';

/** `vastai copy A:/p B:/q` (docs/client-compat.md 2.12): ids arrive as strings. */
export class CopyDirectRequest {
  @IsOptional() src_id?: unknown;
  @IsOptional() dst_id?: unknown;
  @IsOptional() src_path?: unknown;
  @IsOptional() dst_path?: unknown;
}

/** `vastai cloud copy`: instance_id and selected are strings. */
export class CloudCopyRequest {
  @IsOptional() src?: unknown;
  @IsOptional() dst?: unknown;
  @IsOptional() instance_id?: unknown;
  @IsOptional() selected?: unknown;
  @IsOptional() transfer?: unknown;
  @IsOptional() flags?: unknown;
}

/** `vastai cancel sync|copy ID`: {client_id: "me", dst_id: "12371"}. */
export class CancelSyncRequest {
  @IsOptional() dst_id?: unknown;
}

/** copy_direct locations: an instance id, or `C.<id>` (the CLI's container form); volumes and clouds are not served. */
function copyLocationOf(raw: unknown, name: string): number {
  if (raw === 'local' || raw === null || raw === undefined) {
    throw new ApiError(
      400,
      'invalid_args',
      'Copies to or from the local machine go through rsync over SSH, which this platform does not serve yet',
    );
  }
  const text = typeof raw === 'string' ? raw.trim().replace(/^C\./, '') : raw;
  if (typeof text === 'string' && /^[A-Za-z]/.test(text))
    throw new ApiError(
      400,
      'invalid_args',
      `${name} ${JSON.stringify(raw)}: only copies between instances are served (no volumes or cloud services)`,
    );
  return instanceIdOf(text, 'invalid_args', `invalid ${name}`);
}

@Controller('api/v0/commands')
@Authenticated()
export class SyncsController {
  constructor(private readonly commands: CommandBus) {}

  @Put('copy_direct')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.copyDirect,
    ok: ANSWERS.started,
    errors: { 400: ['invalid_args'], 404: ['no_such_instance'], 409: ['sync_in_progress'] },
  })
  async copyDirect(@Body() body: CopyDirectRequest, @CallOf() { caller: principal, metadata }: Call) {
    const srcInstanceId = copyLocationOf(body.src_id, 'src_id');
    const instanceId = copyLocationOf(body.dst_id, 'dst_id');
    const srcPath = requiredPath(body.src_path, 'src_path');
    const dstPath = requiredPath(body.dst_path, 'dst_path');
    const { jobId } = await this.commands.execute(
      new StartSyncCommand(
        principal.userId,
        { kind: 'copy_direct', instanceId, srcInstanceId, srcPath, dstPath, rclone: null },
        metadata,
      ),
    );
    return {
      success: true,
      msg: `Remote copy from instance ${srcInstanceId} to instance ${instanceId} started; progress appears in the destination's status_msg`,
      job_id: jobId,
    };
  }

  @Post('rclone')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.cloudCopy,
    ok: ANSWERS.started,
    errors: {
      400: ['invalid_args'],
      404: ['no_such_instance', 'no_such_cloud_connection'],
      409: ['sync_in_progress'],
    },
  })
  async cloudCopy(@Body() body: CloudCopyRequest, @CallOf() { caller: principal, metadata }: Call) {
    const call = parseCloudCopyCall(body as Record<string, unknown>);
    const { jobId } = await this.commands.execute(
      new StartSyncCommand(principal.userId, { kind: 'rclone', srcInstanceId: null, ...call }, metadata),
    );
    return {
      success: true,
      msg: `Cloud copy recorded as job ${jobId}; its outcome appears in instance ${call.instanceId}'s status_msg`,
      job_id: jobId,
    };
  }

  @Delete('rclone')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.cancelSync,
    ok: ANSWERS.canceledSync,
    errors: { 400: ['invalid_args'], 404: ['no_such_instance'], 409: ['sync_not_active'] },
  })
  cancelSync(@Body() body: CancelSyncRequest, @CallOf() { caller: principal, metadata }: Call) {
    return this.cancel(body, principal, metadata);
  }

  @Delete('copy_direct')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.cancelSync,
    ok: ANSWERS.canceledSync,
    errors: { 400: ['invalid_args'], 404: ['no_such_instance'], 409: ['sync_not_active'] },
  })
  cancelCopy(@Body() body: CancelSyncRequest, @CallOf() { caller: principal, metadata }: Call) {
    return this.cancel(body, principal, metadata);
  }

  private async cancel(body: CancelSyncRequest, principal: AuthenticatedKey, metadata: EventMetadata) {
    const instanceId = instanceIdOf(body?.dst_id, 'invalid_args', 'invalid dst_id');
    const { canceledJobId } = await this.commands.execute(
      new CancelSyncCommand(principal.userId, instanceId, metadata),
    );
    const msg =
      canceledJobId === null
        ? `No remote copy to instance ${instanceId} was in progress`
        : `Remote copy to instance ${instanceId} canceled; progress appears in the instance status bar with about 30 seconds delay. A canceled copy cannot resume: start it again to copy from the beginning`;
    return { success: true, msg, job_id: canceledJobId };
  }
}
