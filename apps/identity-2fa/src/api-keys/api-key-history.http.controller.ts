import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
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
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { apiKeyAsOf } from './api-key-history';
import { keyIdPipe } from './api-keys.http.controller';

/** `GET /api/v0/auth/apikeys/{id}/history/`: created, reset, deleted, and by which request. */
@Controller('api/v0/auth/apikeys')
@Authenticated()
export class ApiKeyHistoryController {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get(':id/history')
  @RequirePermission('user_read')
  @ApiContract({
    ok: HISTORY_ANSWER,
    query: AS_OF_QUERY,
    errors: { 400: ['invalid_args'], 404: ['api_key_not_found'] },
  })
  async history(
    @Param('id', keyIdPipe) id: number,
    @CallOf() { caller }: Call,
    @Query('as_of') asOf?: string,
  ) {
    const asOfMs = asOfMillis(asOf);
    const found = await apiKeyAsOf(this.runtime, caller.userId, id, asOfMs);
    if (!found) throw ApiError.notFound('No such API key', 'api_key_not_found');
    return historyAnswer(found, asOfMs);
  }
}
