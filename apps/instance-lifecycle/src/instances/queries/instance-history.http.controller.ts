import { Controller, Get, Param, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
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
import { positiveId } from '../http-params';
import { InstanceHistoryQuery } from './instance-history.query';

/** `GET /api/v0/instances/{id}/history/`: what happened to one of the caller's instances, event by event. */
@Controller('api/v0/instances')
@Authenticated()
export class InstanceHistoryController {
  constructor(private readonly queries: QueryBus) {}

  @Get(':id/history')
  @RequirePermission('instance_read')
  @ApiContract({
    ok: HISTORY_ANSWER,
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_id', 'invalid_args'], 404: ['no_such_instance'] },
  })
  async history(@Param('id') id: string, @CallOf() { caller }: Call, @Query('as_of') asOf?: string) {
    const asOfMs = asOfMillis(asOf);
    const found = await this.queries.execute(
      new InstanceHistoryQuery(caller.userId, positiveId(id, 'instance id'), asOfMs),
    );
    if (!found) throw ApiError.notFound(`No instance ${id} of yours`, 'no_such_instance');
    return historyAnswer(found, asOfMs);
  }
}
