import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  HISTORY_ANSWER,
  RequirePermission,
  historyEntries,
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
  @ApiContract({ ok: HISTORY_ANSWER, errors: { 404: ['api_key_not_found'] } })
  async history(@Param('id', keyIdPipe) id: number, @CallOf() { caller }: Call) {
    const found = await apiKeyAsOf(this.runtime, caller.userId, id);
    if (!found) throw ApiError.notFound('No such API key', 'api_key_not_found');
    return { success: true, history: historyEntries(found.events) };
  }
}
