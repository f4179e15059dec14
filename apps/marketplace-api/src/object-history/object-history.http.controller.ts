import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import { type ContextRuntime, ownedStreamAsOf } from '@rigmarket/event-sourcing';
import {
  AS_OF_QUERY,
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  HISTORY_ANSWER,
  RequirePermission,
  asOfMillis,
  historyAnswer,
} from '@rigmarket/http-kit';
import { machineDecider, machineStreamId } from '../machines/machine.decider';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { templateDecider, templateStreamId } from '../templates/template.decider';
import { volumeDecider, volumeStreamId } from '../volumes/volume.decider';

function objectId(text: string, what: string): number {
  const id = Number(text);
  if (!Number.isInteger(id) || id < 1 || id > 2_147_483_647)
    throw new ApiError(400, 'invalid_args', `The ${what} id must be a positive integer`);
  return id;
}

/**
 * The history of the caller's machines, templates and volumes (docs/audit.md): their events, and with
 * `?as_of=` the state they had made by then. Another account's object is the same 404 as a missing one.
 */
@Controller('api/v0')
@Authenticated()
export class ObjectHistoryController {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get('machines/:id/history')
  @RequirePermission('machine_read')
  @ApiContract({
    ok: HISTORY_ANSWER,
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_args'], 404: ['machine_not_found'] },
  })
  async machine(@Param('id') id: string, @CallOf() { caller }: Call, @Query('as_of') asOf?: string) {
    const asOfMs = asOfMillis(asOf);
    const found = await ownedStreamAsOf(
      this.runtime,
      machineStreamId(objectId(id, 'machine')),
      machineDecider,
      (state) => state.status !== 'none' && state.ownerId === caller.userId,
      asOfMs,
    );
    if (!found) throw ApiError.notFound('No such machine of yours', 'machine_not_found');
    return historyAnswer(found, asOfMs);
  }

  @Get('template/:id/history')
  @RequirePermission('user_read')
  @ApiContract({
    ok: HISTORY_ANSWER,
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_args'], 404: ['template_not_found'] },
  })
  async template(@Param('id') id: string, @CallOf() { caller }: Call, @Query('as_of') asOf?: string) {
    const asOfMs = asOfMillis(asOf);
    const found = await ownedStreamAsOf(
      this.runtime,
      templateStreamId(objectId(id, 'template')),
      templateDecider,
      (state) => state.status !== 'none' && state.creatorId === caller.userId,
      asOfMs,
    );
    if (!found) throw ApiError.notFound('No such template of yours', 'template_not_found');
    return historyAnswer(found, asOfMs);
  }

  @Get('volumes/:id/history')
  @RequirePermission('instance_read')
  @ApiContract({
    ok: HISTORY_ANSWER,
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_args'], 404: ['volume_not_found'] },
  })
  async volume(@Param('id') id: string, @CallOf() { caller }: Call, @Query('as_of') asOf?: string) {
    const asOfMs = asOfMillis(asOf);
    const found = await ownedStreamAsOf(
      this.runtime,
      volumeStreamId(objectId(id, 'volume')),
      volumeDecider,
      (state) => state.status !== 'none' && state.ownerId === caller.userId,
      asOfMs,
    );
    if (!found) throw ApiError.notFound('No such volume of yours', 'volume_not_found');
    return historyAnswer(found, asOfMs);
  }
}
