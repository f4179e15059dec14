import { Body, Controller, HttpCode, Post, Put } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { AnswersJsonText, ApiContract, Authenticated, jsonObjectText } from '@rigmarket/http-kit';
import { SearchOffersQuery } from './offers.handlers';
import { ANSWERS, BODIES } from '../marketplace.openapi';

/**
 * Offer search (docs/client-compat.md 2.1). Like every endpoint it needs a valid Bearer key (401 without
 * one), but no particular permission category: any account's key may browse the market. The answer
 * `{"offers": [...]}` is sent as text, the offers as the database wrote them (searchOffersJson).
 */
@Controller('api/v0')
@Authenticated()
export class OffersController {
  constructor(private readonly queries: QueryBus) {}

  @Post('bundles')
  @HttpCode(200)
  @AnswersJsonText()
  @ApiContract({ body: BODIES.offerSearch, ok: ANSWERS.offers })
  async bundles(@Body() body: Record<string, unknown>) {
    return jsonObjectText({ offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) });
  }

  /** `search offers --new`: `{select_cols: [...], q: {...}}`. */
  @Put('search/asks')
  @AnswersJsonText()
  @ApiContract({ body: BODIES.offerSearch, ok: ANSWERS.offers })
  async searchAsks(@Body() body: Record<string, unknown>) {
    return jsonObjectText({ offers: await this.queries.execute(new SearchOffersQuery(body ?? {})) });
  }
}
