import { Body, Controller, Get, HttpCode, Post, Put, Query as QueryParam } from '@nestjs/common';
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
import { BillingHistoryQuery, type HistoryRequest, SearchInvoicesQuery } from './billing-history';
import { TransferCreditCommand } from './credit-transfers';
import { EarningsQuery, GrantCreditCommand, LedgerEntriesQuery } from './ledger.handlers';
import { ANSWERS, BODIES, QUERIES } from '../marketplace.openapi';

/** The billing ledger: admin grants, renters' invoices and charges, hosts' earnings. */
@Controller('api/v0')
@Authenticated()
export class LedgerController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Admins only: `{user_id, amount, note?}`, amount in dollars (at most $1,000,000). */
  @Post('credit')
  @HttpCode(200)
  @RequirePermission('billing_write')
  @ApiContract({
    body: BODIES.credit,
    ok: ANSWERS.granted,
    errors: { 400: ['invalid_amount'], 404: ['user_not_found'] },
  })
  async grant(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const userId = Number(body.user_id);
    const amount = typeof body.amount === 'number' ? body.amount : Number(body.amount);
    if (!Number.isInteger(userId)) throw ApiError.badRequest('user_id must be an integer');
    // Bounds (MONEY_LIMITS.creditGrant) are the ledger decider's, after the admin check.
    const note = typeof body.note === 'string' ? body.note : null;
    const { balance } = await this.commands.execute(
      new GrantCreditCommand(principal.userId, userId, dollarsToMicros(amount), note, metadata),
    );
    return { success: true, user_id: userId, credit: microsToDollars(balance) };
  }

  /**
   * `vastai transfer credit RECIPIENT AMOUNT`: `{sender: "me", recipient, amount}`, recipient an e-mail or an
   * account id, amount in dollars (at most $1,000,000, and at most the balance: else 402). The CLI prints
   * `Sent <amount> to <recipient>` when `success`, else `msg`.
   */
  @Put('commands/transfer_credit')
  @RequirePermission('billing_write')
  @ApiContract({
    body: BODIES.transferCredit,
    ok: ANSWERS.transferred,
    errors: { 400: ['invalid_amount', 'bad_request'], 402: ['insufficient_credit'], 404: ['user_not_found'] },
  })
  async transfer(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    if (body.sender !== undefined && body.sender !== 'me' && body.sender !== principal.userId)
      throw ApiError.forbidden('Credit can only be sent from your own account (sender "me")');
    const recipient = typeof body.recipient === 'number' ? String(body.recipient) : body.recipient;
    if (typeof recipient !== 'string' || recipient.length === 0 || recipient.length > 254)
      throw ApiError.badRequest('recipient must be an e-mail or an account id');
    const dollars = typeof body.amount === 'string' ? Number(body.amount) : body.amount;
    const amount = boundedDollars('amount', dollars as number, MONEY_LIMITS.creditTransfer);
    const { balance, recipientId } = await this.commands.execute(
      new TransferCreditCommand(principal.userId, recipient, dollarsToMicros(amount), metadata),
    );
    return {
      success: true,
      msg: `Sent ${amount} to account ${recipientId}`,
      recipient_id: recipientId,
      amount,
      credit: microsToDollars(balance),
    };
  }

  @Get('users/me/credit')
  @RequirePermission('billing_read')
  @ApiContract({ ok: ANSWERS.credit })
  async credit(@CallOf() { caller: principal }: Call) {
    const { balance } = await this.queries.execute(new LedgerEntriesQuery(principal.userId, []));
    return { success: true, credit: balance };
  }

  /** `vastai show invoices`: reads `invoices` and `current`. */
  @Get('users/me/invoices')
  @RequirePermission('billing_read')
  @ApiContract({ ok: ANSWERS.invoices })
  async invoices(@CallOf() { caller: principal }: Call) {
    const { entries, balance } = await this.queries.execute(
      new LedgerEntriesQuery(principal.userId, ['credit', 'charge_gpu', 'charge_storage']),
    );
    const charges = entries
      .filter((e) => e.type !== 'credit')
      .reduce((sum, e) => sum + dollarsToMicros(e.amount), 0);
    return {
      success: true,
      invoices: entries,
      current: { credit: balance, charges: microsToDollars(charges) },
    };
  }

  /**
   * `vastai show invoices-v1 -c`: one page of charges (`results`, `count`, `total`, `next_token`;
   * billing-history.ts); `charges` keeps the whole list as earlier clients read it.
   */
  @Get('charges')
  @RequirePermission('billing_read')
  @ApiContract({ query: QUERIES.history, ok: ANSWERS.charges })
  async charges(@CallOf() { caller: principal }: Call, @QueryParam() query: HistoryRequest) {
    const [{ entries }, page] = await Promise.all([
      this.queries.execute(new LedgerEntriesQuery(principal.userId, ['charge_gpu', 'charge_storage'])),
      this.queries.execute(new BillingHistoryQuery(principal.userId, 'charges', query)),
    ]);
    return { success: true, charges: entries, ...page };
  }

  /** `vastai search invoices 'amount_cents>3000'`: the account's invoices matching select_filters. */
  @Get('invoices')
  @RequirePermission('billing_read')
  @ApiContract({ query: QUERIES.searchInvoices, ok: ANSWERS.searchInvoices })
  searchInvoices(@CallOf() { caller: principal }: Call, @QueryParam('select_filters') filters: unknown) {
    return this.queries.execute(new SearchInvoicesQuery(principal.userId, filters));
  }

  /**
   * A host's earnings, per entry and per machine (`vastai show earnings` calls machine-earnings with `machid`,
   * and `sday`/`eday` in days since the epoch: whole days, the end day included). Without them: all of them.
   */
  @Get(['users/me/earnings', 'users/me/machine-earnings'])
  @RequirePermission('billing_read')
  @ApiContract({ query: QUERIES.earnings, ok: ANSWERS.earnings, errors: { 400: ['bad_request'] } })
  async earnings(
    @CallOf() { caller: principal }: Call,
    @QueryParam('machine_id') machineId?: string,
    @QueryParam('machid') machid?: string,
    @QueryParam('sday') sday?: string,
    @QueryParam('eday') eday?: string,
  ) {
    // The CLI sends an unset filter as `None` (older releases) or `null` (1.9: `machid=null` without -m).
    const unset = (value: string | undefined) =>
      value === undefined || value === '' || value === 'None' || value === 'null';
    const day = (name: string, value: string | undefined): number | null => {
      if (unset(value)) return null;
      const days = Number(value);
      if (!Number.isFinite(days) || days < 0 || days > 200_000) {
        throw ApiError.badRequest(`${name} must be a day number (days since 1970-01-01)`);
      }
      return Math.floor(days);
    };
    const machine = machineId ?? machid;
    const machineNumber = unset(machine) ? null : Number(machine);
    if (
      machineNumber !== null &&
      (!Number.isInteger(machineNumber) || machineNumber < 1 || machineNumber > 2 ** 31 - 1)
    ) {
      throw ApiError.badRequest('machine_id (machid) must be a machine id');
    }
    const from = day('sday', sday);
    const to = day('eday', eday);
    const { entries, machines } = await this.queries.execute(
      new EarningsQuery(principal.userId, {
        machineId: machineNumber,
        from: from === null ? null : new Date(from * 86_400_000),
        to: to === null ? null : new Date((to + 1) * 86_400_000),
      }),
    );
    return { success: true, earnings: entries, machines };
  }
}

/** `vastai show invoices-v1 -i`: one page of the account's invoices (grants and transfers). */
@Controller('api/v1')
@Authenticated()
export class InvoicesV1Controller {
  constructor(private readonly queries: QueryBus) {}

  @Get('invoices')
  @RequirePermission('billing_read')
  @ApiContract({ query: QUERIES.history, ok: ANSWERS.history })
  async invoices(@CallOf() { caller: principal }: Call, @QueryParam() query: HistoryRequest) {
    return {
      success: true,
      ...(await this.queries.execute(new BillingHistoryQuery(principal.userId, 'invoices', query))),
    };
  }
}
