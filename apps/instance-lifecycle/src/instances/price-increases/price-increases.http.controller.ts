import { Body, Controller, Get, HttpCode, Put } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import { ApiContract, Authenticated, RequirePermission } from '@rigmarket/http-kit';
import { Allow } from 'class-validator';
import { ANSWERS, BODIES } from '../../instance-lifecycle.openapi';

/** What `vastai accept|reject price-increase` sends for each instance it resolved to a pending increase. */
export class PriceIncreaseDto {
  @Allow() pending_price_increase_id?: unknown;
}

/**
 * `vastai show pending-price-increases` and `accept|reject price-increase`. On the commercial service a host
 * may raise the price of a rental's extension past its end date, and the renter accepts or rejects it. A
 * Rigmarket rental has no end date of its own and keeps the price it was rented at: a host's new price applies
 * to new rentals only (docs/instances.md, Prices of running instances). So no rental ever has a pending
 * increase: the list is empty, and accepting or rejecting one answers what the commercial service answers for a
 * stale id, 404 no_pending_price_increase.
 */
@Controller('api/v0/instances')
@Authenticated()
export class PriceIncreasesController {
  @Get('pending-price-increases')
  @RequirePermission('instance_read')
  @ApiContract({ ok: ANSWERS.pendingPriceIncreases })
  pending() {
    return { success: true, count: 0, truncated: false, pending_price_increases: [] };
  }

  @Put(['accept-price-increase', 'reject-price-increase'])
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.priceIncrease,
    ok: ANSWERS.msg,
    errors: { 400: ['bad_request'], 404: ['no_pending_price_increase'] },
  })
  decide(@Body() body: PriceIncreaseDto): never {
    const id = body.pending_price_increase_id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > 2 ** 31 - 1)
      throw ApiError.badRequest('pending_price_increase_id must be a positive integer');
    throw ApiError.notFound(
      `No pending price increase ${id}: Rigmarket rentals keep the price they were rented at`,
      'no_pending_price_increase',
    );
  }
}
