import { Controller, Get, Inject, Query } from '@nestjs/common';
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
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { tfaDecider, tfaStreamId } from './tfa.decider';

/**
 * `GET /api/v0/tfa/history/`: the caller's 2FA methods, challenges and backup codes as events (methods added,
 * removed, codes issued and used, failed codes), with `?as_of=` the state then. Secrets, their hashes and phone
 * numbers never appear (redactSecrets).
 */
@Controller('api/v0/tfa')
@Authenticated()
export class TfaHistoryController {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get('history')
  @RequirePermission('user_read')
  @ApiContract({ ok: HISTORY_ANSWER, query: AS_OF_QUERY, errors: { 400: ['invalid_args'] } })
  async history(@CallOf() { caller }: Call, @Query('as_of') asOf?: string) {
    const asOfMs = asOfMillis(asOf);
    const found = await ownedStreamAsOf(
      this.runtime,
      tfaStreamId(caller.userId),
      tfaDecider,
      () => true,
      asOfMs,
    );
    return historyAnswer(found ?? { events: [], state: tfaDecider.initialState() }, asOfMs);
  }
}
