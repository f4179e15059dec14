import { Body, Controller, HttpCode, Post, Put } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiContract, Authenticated } from '@rigmarket/http-kit';
import { SearchOffersQuery } from './offers.handlers';
import { ANSWERS, BODIES } from '../marketplace.openapi';

/**
 * Offer search (docs/client-compat.md 2.1). Like every endpoint it needs a valid Bearer key (401 without
 * one), but no particular permission category: any account's key may browse the market.
 */
@Controller('api/v0')
@Authenticated()
export class OffersController {
  constructor(private readonly queries: QueryBus) {}

  @Post('bundles')
  @HttpCode(200)
  @ApiContract({ body: BODIES.offerSearch, ok: ANSWERS.offers })
  async bundles(@Body() body: Record<string, unknown>) {
    return { offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) };
  }

  /** `search offers --new`: `{select_cols: [...], q: {...}}`. */
  @Put('search/asks')
  @ApiContract({ body: BODIES.offerSearch, ok: ANSWERS.offers })
  async searchAsks(@Body() body: Record<string, unknown>) {
    return { offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) };
  }
}
