import { Body, Controller, Delete, HttpCode, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError, type CloudTransfer, type EventMetadata } from '@rigmarket/contracts';
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

/** An instance id as an integer or a string of digits; anything else is refused with `error`/`msg`. */
export function instanceIdOf(raw: unknown, error: string, msg: string): number {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new ApiError(400, error, msg);
  return Number(text);
}

function requiredPath(raw: unknown, name: string): string {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new ApiError(400, 'invalid_args', `${name} must be a path`);
  if (raw.includes('\0')) throw new ApiError(400, 'invalid_args', `invalid ${name}`);
  return raw.trim();
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

const TRANSFERS: readonly CloudTransfer[] = ['Instance To Cloud', 'Cloud To Instance'];

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
    const instanceId = instanceIdOf(body.instance_id, 'invalid_args', 'invalid instance_id');
    const transfer = TRANSFERS.find((t) => t === body.transfer);
    if (!transfer)
      throw new ApiError(400, 'invalid_args', `transfer must be one of: ${TRANSFERS.join(', ')}`);
    const connection =
      typeof body.selected === 'number' || typeof body.selected === 'string' ? String(body.selected) : '';
    if (connection === '')
      throw new ApiError(400, 'invalid_args', 'selected (the cloud connection id) is required');
    const flags = Array.isArray(body.flags)
      ? body.flags.filter((f): f is string => typeof f === 'string')
      : [];
    const { jobId } = await this.commands.execute(
      new StartSyncCommand(
        principal.userId,
        {
          kind: 'rclone',
          instanceId,
          srcInstanceId: null,
          srcPath: requiredPath(body.src, 'src'),
          dstPath: requiredPath(body.dst, 'dst'),
          rclone: { connection, transfer, flags },
        },
        metadata,
      ),
    );
    return {
      success: true,
      msg: `Cloud copy recorded as job ${jobId}; its outcome appears in instance ${instanceId}'s status_msg`,
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
