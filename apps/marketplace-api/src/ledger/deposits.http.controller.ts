import { Body, Controller, Get, Param, ParseIntPipe, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiError,
  MONEY_LIMITS,
  boundedDollars,
  dollarsToMicros,
  microsToDollars,
} from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { ANSWERS, BODIES } from '../marketplace.openapi';
import { DepositQuery, PrepayInstanceCommand } from './instance-deposits';

const instanceIdPipe = new ParseIntPipe({
  exceptionFactory: () => ApiError.badRequest('The instance id must be an integer'),
});

/** Reserved instances: a renter's prepayments into an instance's deposit (instance-deposits.ts). */
@Controller('api/v0/instances')
@Authenticated()
export class DepositsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /**
   * `vastai prepay instance ID AMOUNT`: `{amount}` in dollars (at most $1,000,000 and at most the credit:
   * else 402). The CLI prints the `timescale` (months the deposit lasts at the current rate) and the
   * `discount_rate` (always 0 here: no discount for prepaying).
   */
  @Put('prepay/:id')
  @RequirePermission('billing_write')
  @ApiContract({
    body: BODIES.prepay,
    ok: ANSWERS.prepaid,
    errors: { 400: ['invalid_amount'], 402: ['insufficient_credit'], 404: ['no_such_instance'] },
  })
  async prepay(
    @Param('id', instanceIdPipe) id: number,
    @Body() body: unknown,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const dollars = typeof body.amount === 'string' ? Number(body.amount) : body.amount;
    const amount = boundedDollars('amount', dollars as number, MONEY_LIMITS.instancePrepay);
    const { depositMicros, balanceMicros, timescale } = await this.commands.execute(
      new PrepayInstanceCommand(principal.userId, id, dollarsToMicros(amount), metadata),
    );
    return {
      success: true,
      msg: `Prepaid $${amount} into the deposit of instance ${id}`,
      instance_id: id,
      amount,
      deposit: microsToDollars(depositMicros),
      credit: microsToDollars(balanceMicros),
      timescale,
      discount_rate: 0,
    };
  }

  /** `vastai show deposit ID`: what is left of the instance's deposit, and what was prepaid, drawn and refunded. */
  @Get('balance/:id')
  @RequirePermission('billing_read')
  @ApiContract({ ok: ANSWERS.deposit, errors: { 404: ['no_such_instance'] } })
  deposit(@Param('id', instanceIdPipe) id: number, @CallOf() { caller: principal }: Call) {
    return this.queries.execute(new DepositQuery(principal.userId, id));
  }
}
