import { Body, Controller, HttpCode, Post, Put, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { AnswersJsonText, ApiContract, Authenticated } from '@rigmarket/http-kit';
import type { Response } from 'express';
import type { SearchAnswer } from './offer-search-cache';
import { SearchOffersQuery } from './offers.handlers';
import { ANSWERS, BODIES } from '../marketplace.openapi';

type ETagFunction = (body: string, encoding: BufferEncoding) => string | undefined;

/**
 * The answer's text, with the ETag Express would compute for it set beforehand: Express hashes the whole
 * body (~110 KB) on every send, an answer from the cache (one object per entry) is hashed once.
 */
function sendAnswer(res: Response, answer: SearchAnswer): string {
  const etagOf = res.app.get('etag fn') as ETagFunction | undefined;
  if (etagOf) {
    answer.etag ??= etagOf(answer.text, 'utf8');
    if (answer.etag) res.setHeader('ETag', answer.etag);
  }
  return answer.text;
}

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
  async bundles(@Body() body: Record<string, unknown>, @Res({ passthrough: true }) res: Response) {
    return sendAnswer(res, await this.queries.execute(new SearchOffersQuery(body ?? {})));
  }

  /** `search offers --new`: `{select_cols: [...], q: {...}}`. */
  @Put('search/asks')
  @AnswersJsonText()
  @ApiContract({ body: BODIES.offerSearch, ok: ANSWERS.offers })
  async searchAsks(@Body() body: Record<string, unknown>, @Res({ passthrough: true }) res: Response) {
    return sendAnswer(res, await this.queries.execute(new SearchOffersQuery(body ?? {})));
  }
}
