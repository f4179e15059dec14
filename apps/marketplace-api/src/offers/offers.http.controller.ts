import { Body, Controller, HttpCode, Post, Put, UseGuards } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { BearerGuard, Public } from '@rigmarket/http-kit';
import { SearchOffersQuery } from './offers.handlers';

/**
 * Offer search (docs/client-compat.md 2.1). Searching needs no particular permission category, as at the
 * anchor service: any caller may browse the market.
 */
@Controller('api/v0')
@UseGuards(BearerGuard)
export class OffersController {
  constructor(private readonly queries: QueryBus) {}

  @Public()
  @Post('bundles')
  @HttpCode(200)
  async bundles(@Body() body: Record<string, unknown>) {
    return { offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) };
  }

  /** `search offers --new`: `{select_cols: [...], q: {...}}`. */
  @Public()
  @Put('search/asks')
  async searchAsks(@Body() body: Record<string, unknown>) {
    return { offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) };
  }
}
