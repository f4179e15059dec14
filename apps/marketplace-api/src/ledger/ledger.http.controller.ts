import { Body, Controller, Get, HttpCode, Post, Query as QueryParam } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError, dollarsToMicros, microsToDollars } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { GrantCreditCommand, LedgerEntriesQuery } from './ledger.handlers';
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

  @Get('charges')
  @RequirePermission('billing_read')
  @ApiContract({ ok: ANSWERS.charges })
  async charges(@CallOf() { caller: principal }: Call) {
    const { entries } = await this.queries.execute(
      new LedgerEntriesQuery(principal.userId, ['charge_gpu', 'charge_storage']),
    );
    return { success: true, charges: entries };
  }

  /** A host's earnings, per entry and per machine (`vastai show earnings` calls machine-earnings). */
  @Get(['users/me/earnings', 'users/me/machine-earnings'])
  @RequirePermission('billing_read')
  @ApiContract({ query: QUERIES.earnings, ok: ANSWERS.earnings })
  async earnings(@CallOf() { caller: principal }: Call, @QueryParam('machine_id') machineId?: string) {
    const all = (await this.queries.execute(new LedgerEntriesQuery(principal.userId, ['earning']))).entries;
    const entries = machineId ? all.filter((e) => e.machine_id === Number(machineId)) : all;
    const perMachine: Record<string, number> = {};
    for (const e of entries)
      perMachine[String(e.machine_id)] = (perMachine[String(e.machine_id)] ?? 0) + dollarsToMicros(e.amount);
    const machines = Object.fromEntries(
      Object.entries(perMachine).map(([id, m]) => [id, microsToDollars(m)]),
    );
    return { success: true, earnings: entries, machines };
  }
}
