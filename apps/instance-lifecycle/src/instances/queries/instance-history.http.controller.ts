import { Controller, Get, Param } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  HISTORY_ANSWER,
  RequirePermission,
  historyEntries,
} from '@rigmarket/http-kit';
import { positiveId } from '../http-params';
import { InstanceHistoryQuery } from './instance-history.query';

/** `GET /api/v0/instances/{id}/history/`: what happened to one of the caller's instances, event by event. */
@Controller('api/v0/instances')
@Authenticated()
export class InstanceHistoryController {
  constructor(private readonly queries: QueryBus) {}

  @Get(':id/history')
  @RequirePermission('instance_read')
  @ApiContract({ ok: HISTORY_ANSWER, errors: { 404: ['no_such_instance'] } })
  async history(@Param('id') id: string, @CallOf() { caller }: Call) {
    const found = await this.queries.execute(
      new InstanceHistoryQuery(caller.userId, positiveId(id, 'instance id')),
    );
    if (!found) throw ApiError.notFound(`No instance ${id} of yours`, 'no_such_instance');
    return { success: true, history: historyEntries(found.events) };
  }
}
