import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { Allow } from 'class-validator';
import { ANSWERS, BODIES } from '../../instance-lifecycle.openapi';
import { positiveId } from '../http-params';
import { TakeSnapshotCommand } from './take-snapshot.handler';
import { type TakeSnapshotBody, parseSnapshotRequest } from './snapshot-request';

/** The body `vastai take snapshot` sends; checked by parseSnapshotRequest, whose messages say what is wrong. */
export class TakeSnapshotDto implements TakeSnapshotBody {
  @Allow() id?: unknown;
  @Allow() container_registry?: unknown;
  @Allow() personal_repo?: unknown;
  @Allow() docker_login_user?: unknown;
  @Allow() docker_login_pass?: unknown;
  @Allow() pause?: unknown;
}

/**
 * `vastai take snapshot`: the instance's host commits its container and pushes it to the renter's registry;
 * show instance follows it (snapshot_status, snapshot_msg: docs/instances.md, Snapshots).
 */
@Controller('api/v0/instances')
@Authenticated()
export class TakeSnapshotController {
  constructor(private readonly commands: CommandBus) {}

  @Post('take_snapshot/:id')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.snapshot,
    ok: ANSWERS.snapshot,
    errors: {
      400: ['invalid_id', 'bad_request', 'instance_not_running'],
      404: ['no_such_instance'],
      409: ['snapshot_in_progress'],
    },
  })
  async take(
    @Param('id') idRaw: string,
    @Body() body: TakeSnapshotDto,
    @CallOf() { caller, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    const request = parseSnapshotRequest(body);
    const { snapshotId, image } = await this.commands.execute(
      new TakeSnapshotCommand(caller.userId, id, request, metadata),
    );
    return {
      success: true,
      msg: `Snapshot ${snapshotId} of instance ${id} requested: its host commits the container and pushes ${image}; show instance ${id} gives its progress (snapshot_status)`,
      snapshot_id: snapshotId,
      image,
    };
  }
}
