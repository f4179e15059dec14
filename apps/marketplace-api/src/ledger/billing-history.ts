import { Inject } from '@nestjs/common';
import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { ApiError, decimalToMicros, microsToDollars } from '@rigmarket/contracts';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { decodeOffsetToken, encodeOffsetToken } from '@rigmarket/http-kit';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { type FieldSpec, type Filter, filterSql, parseFilter } from '../offers/offer-query';
import { SCHEMA } from '../schema';

/**
 * An account's billing history as the vastai CLI reads it, from marketplace's ledger_entries read model:
 * invoices (credit granted, credit transferred in or out) and charges (an instance's GPU and storage
 * periods). `show invoices-v1` pages them (`{results, count, total, next_token}`), `search invoices` filters
 * invoices with the offer search language. docs/marketplace.md, "Billing history".
 */
export const INVOICE_KINDS = ['credit', 'transfer_in', 'transfer_out'] as const;
export const CHARGE_KINDS = ['charge_gpu', 'charge_storage'] as const;

interface EntryRow {
  position: number;
  user_id: number;
  kind: string;
  amount: string | number;
  instance_id: number | null;
  machine_id: number | null;
  note: string | null;
  period_start: Date | string | null;
  period_end: Date | string | null;
  at: Date | string;
}

const ENTRY_COLUMNS =
  'position, user_id, kind, amount::text AS amount, instance_id, machine_id, note, period_start, period_end, at';
const epoch = (value: Date | string | null) => (value === null ? null : new Date(value).getTime() / 1000);
const dollars = (row: EntryRow) => microsToDollars(decimalToMicros(row.amount));

/** What an invoice's `service` is: a grant by an admin, or a transfer between accounts. */
const SERVICE_SQL = `CASE WHEN kind = 'credit' THEN 'credit' ELSE 'transfer' END`;

const field = (kind: FieldSpec['kind'], sql: string): FieldSpec => ({ kind, sql: () => sql });

/** The invoice fields `search invoices` may filter on (the CLI's list, less what no ledger entry has). */
export const INVOICE_FIELDS: Readonly<Record<string, FieldSpec>> = {
  id: field('number', 'position'),
  user_id: field('number', 'user_id'),
  when: field('number', 'extract(epoch FROM at)'),
  paid_on: field('number', 'extract(epoch FROM at)'),
  payment_expected: field('number', 'extract(epoch FROM at)'),
  amount_cents: field('number', `round(amount * 100 * CASE WHEN kind = 'transfer_out' THEN -1 ELSE 1 END)`),
  is_credit: field('bool', `(kind <> 'transfer_out')`),
  is_delayed: field('bool', 'FALSE'),
  service: field('string', SERVICE_SQL),
  failed: field('bool', 'FALSE'),
  refunded: field('bool', 'FALSE'),
};

/** A row of `search invoices`: the invoice fields above (amounts of transfers out are negative). */
function invoiceRow(row: EntryRow) {
  const sign = row.kind === 'transfer_out' ? -1 : 1;
  const micros = decimalToMicros(row.amount) * sign;
  const at = epoch(row.at);
  return {
    id: Number(row.position),
    user_id: Number(row.user_id),
    when: at,
    paid_on: at,
    payment_expected: at,
    amount: microsToDollars(micros),
    amount_cents: Math.round(micros / 10_000),
    is_credit: row.kind !== 'transfer_out',
    is_delayed: false,
    service: row.kind === 'credit' ? 'credit' : 'transfer',
    description: row.note,
    failed: false,
    refunded: false,
  };
}

const json = (raw: unknown, name: string): unknown => {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw ApiError.badRequest(`${name} must be JSON`);
  }
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const SEARCH_INVOICES_LIMIT = 1000;

/** GET /invoices (`vastai search invoices 'amount_cents>3000'`): `{invoices: [...]}`, newest first. */
export async function searchInvoices(sql: Sql, userId: number, rawFilters: unknown) {
  const filters = json(rawFilters, 'select_filters') ?? {};
  if (!isObject(filters)) throw ApiError.badRequest('select_filters must be a JSON object');
  const parsed: Filter[] = Object.entries(filters).flatMap(([name, ops]) => {
    if (!INVOICE_FIELDS[name])
      throw ApiError.badRequest(`Unknown invoice field: ${name}`, {
        field: name,
        fields: Object.keys(INVOICE_FIELDS),
      });
    return parseFilter(name, ops, INVOICE_FIELDS);
  });
  const params: unknown[] = [userId, [...INVOICE_KINDS]];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const terms = [
    'user_id = $1',
    'kind = ANY($2::text[])',
    ...filterSql(parsed, INVOICE_FIELDS, { price: '', storage: '', now: '' }, param),
  ];
  const rows = await sql.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM ${SCHEMA}.ledger_entries WHERE ${terms.join(' AND ')}
      ORDER BY at DESC, position DESC LIMIT ${SEARCH_INVOICES_LIMIT}`,
    params,
  );
  return { success: true, invoices: rows.map(invoiceRow) };
}

/** One page of `show invoices-v1`: what the CLI reads. */
export interface HistoryPage {
  results: HistoryItem[];
  count: number;
  total: number;
  next_token: string | null;
}

export interface HistoryItem {
  id: number;
  type: string;
  source: string;
  amount: number;
  start: number | null;
  end: number | null;
  description: string;
  metadata: Record<string, number | string | null>;
  items: HistoryItem[];
}

export const HISTORY_MAX_LIMIT = 100;

function bool(raw: unknown, name: string): boolean {
  const value = json(raw, name);
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw ApiError.badRequest(`${name} must be true or false`);
  return value;
}

/** A `{gte, lte}` range of epoch seconds on the date column, either end optional. */
function range(filters: Record<string, unknown>, column: string): { from: number | null; to: number | null } {
  const raw = filters[column];
  if (raw === undefined) return { from: null, to: null };
  if (!isObject(raw)) throw ApiError.badRequest(`select_filters.${column} must be {"gte": .., "lte": ..}`);
  const bound = (value: unknown, name: string) => {
    if (value === undefined || value === null) return null;
    const n = Number(value);
    if (!Number.isFinite(n))
      throw ApiError.badRequest(`select_filters.${column}.${name} must be epoch seconds`);
    return n;
  };
  return { from: bound(raw.gte, 'gte'), to: bound(raw.lte, 'lte') };
}

/** The `in` list of a filter, or null when there is none. */
function inList(filters: Record<string, unknown>, name: string): string[] | null {
  const raw = filters[name];
  if (raw === undefined) return null;
  if (!isObject(raw) || !Array.isArray(raw.in) || raw.in.some((v) => typeof v !== 'string'))
    throw ApiError.badRequest(`select_filters.${name} must be {"in": [names]}`);
  return raw.in as string[];
}

export interface HistoryRequest {
  select_filters?: unknown;
  latest_first?: unknown;
  limit?: unknown;
  after_token?: unknown;
}

/**
 * GET /api/v0/charges/ (`show invoices-v1 -c`) and GET /api/v1/invoices/ (`-i`): one page of the account's
 * charges or invoices in a date range (`select_filters.day` or `.when`, epoch seconds; the CLI sends whole
 * seconds, so an entry counts by its second: one made in the second the CLI read its clock is included), oldest first unless
 * latest_first, at most 100 a page. Charges may be narrowed by `type` (only `instance` exists here),
 * invoices by `service` (`transfer`; a grant's service is `credit`, which the CLI cannot name).
 */
export async function historyPage(
  sql: Sql,
  userId: number,
  what: 'charges' | 'invoices',
  query: HistoryRequest,
): Promise<HistoryPage> {
  const filters = json(query.select_filters, 'select_filters') ?? {};
  if (!isObject(filters)) throw ApiError.badRequest('select_filters must be a JSON object');
  const limit = query.limit === undefined || query.limit === '' ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT)
    throw ApiError.badRequest(`limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}`);
  const offset = decodeOffsetToken(query.after_token);
  const latestFirst = bool(query.latest_first, 'latest_first');
  const { from, to } = range(filters, what === 'charges' ? 'day' : 'when');

  let kinds: string[] = what === 'charges' ? [...CHARGE_KINDS] : [...INVOICE_KINDS];
  if (what === 'charges') {
    const types = inList(filters, 'type');
    if (types && !types.includes('instance')) kinds = [];
  } else {
    const services = inList(filters, 'service');
    if (services) kinds = kinds.filter((k) => services.includes(k === 'credit' ? 'credit' : 'transfer'));
  }
  const where = `user_id = $1 AND kind = ANY($2::text[])
    AND ($3::float8 IS NULL OR at >= to_timestamp($3::float8))
    AND ($4::float8 IS NULL OR date_trunc('second', at) <= to_timestamp($4::float8))`;
  const params = [userId, kinds, from, to];
  const [counted] = await sql.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM ${SCHEMA}.ledger_entries WHERE ${where}`,
    params,
  );
  const total = Number(counted?.n ?? 0);
  const dir = latestFirst ? 'DESC' : 'ASC';
  const rows = await sql.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM ${SCHEMA}.ledger_entries WHERE ${where}
      ORDER BY at ${dir}, stream_id ${dir}, position ${dir} LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  const results = rows.map(what === 'charges' ? chargeItem : invoiceItem);
  const next = offset + rows.length;
  return { results, count: results.length, total, next_token: next < total ? encodeOffsetToken(next) : null };
}

function chargeItem(row: EntryRow): HistoryItem {
  return {
    id: Number(row.position),
    type: 'instance',
    // The CLI splits `instance-<id>` into the type and the id it shows.
    source: `instance-${row.instance_id}`,
    amount: dollars(row),
    start: epoch(row.period_start),
    end: epoch(row.period_end),
    description: row.kind === 'charge_gpu' ? 'GPU compute' : 'Storage',
    metadata: { instance_id: row.instance_id, machine_id: row.machine_id },
    items: [],
  };
}

/**
 * The CLI flips the sign of every invoice but transfers (a payment is a negative charge to it): a grant is
 * sent negative so that it shows as +$, a transfer as it moved the balance (in +, out -).
 */
function invoiceItem(row: EntryRow): HistoryItem {
  const at = epoch(row.at);
  const amount = dollars(row);
  const transfer = row.kind !== 'credit';
  return {
    id: Number(row.position),
    type: transfer ? 'transfer' : 'credit',
    source: transfer ? (row.note ?? '') : 'admin',
    amount: row.kind === 'credit' ? -amount : row.kind === 'transfer_out' ? -amount : amount,
    start: at,
    end: at,
    description: row.note ?? (transfer ? 'Credit transfer' : 'Credit granted'),
    metadata: { invoice_id: Number(row.position) },
    items: [],
  };
}

export class BillingHistoryQuery extends Query<HistoryPage> {
  constructor(
    readonly userId: number,
    readonly what: 'charges' | 'invoices',
    readonly request: HistoryRequest,
  ) {
    super();
  }
}

@QueryHandler(BillingHistoryQuery)
export class BillingHistoryHandler implements IQueryHandler<BillingHistoryQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  execute(q: BillingHistoryQuery): Promise<HistoryPage> {
    return historyPage(this.runtime.db, q.userId, q.what, q.request);
  }
}

export class SearchInvoicesQuery extends Query<Awaited<ReturnType<typeof searchInvoices>>> {
  constructor(
    readonly userId: number,
    readonly filters: unknown,
  ) {
    super();
  }
}

@QueryHandler(SearchInvoicesQuery)
export class SearchInvoicesHandler implements IQueryHandler<SearchInvoicesQuery> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  execute(q: SearchInvoicesQuery) {
    return searchInvoices(this.runtime.db, q.userId, q.filters);
  }
}
