import { ApiError } from '@rigmarket/contracts';
import { OFFER_COLUMNS, driverVersionNumber } from './offer-rows';

/** The offer row's columns that the API shows (driver_vers is only for filtering). */
const OFFER_OUTPUT_COLUMNS: readonly string[] = OFFER_COLUMNS.filter((c) => c !== 'driver_vers');

/**
 * The offer search language (docs/client-compat.md 2.1): `{field: {op: value}}` filters plus order, type,
 * limit and allocated_storage. Parsing is pure; SQL is built from whitelisted fragments with every
 * value as a parameter.
 */
export type FieldKind = 'number' | 'string' | 'bool';
export type Operator = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'notin';
export type OfferType = 'on-demand' | 'bid' | 'reserved';
export type Scalar = number | string | boolean | null;

export interface Filter {
  field: string;
  op: Operator;
  /** A list for in/notin. */
  value: Scalar | Scalar[];
}

export interface OfferQuery {
  filters: Filter[];
  order: Array<{ field: string; direction: 'asc' | 'desc' }>;
  type: OfferType;
  limit: number;
  allocatedStorage: number;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const DEFAULT_STORAGE_GB = 5;
/** storage_cost is $/GB/month; dph is per hour. */
export const HOURS_PER_MONTH = 720;

/** Per-query values a field's SQL may use. */
export interface SqlContext {
  /** the per-hour base price column of the requested type */
  price: string;
  storage: string;
  now: string;
  /** Offers only, when some machine has a pending maintenance window: the array parameters. */
  maintenance?: { machineIds: string; starts: string };
}

export interface FieldSpec {
  kind: FieldKind;
  sql: (c: SqlContext) => string;
}

const column = (kind: FieldKind, name: string): FieldSpec => ({ kind, sql: () => name });

/**
 * How long an offer can be rented from now: until the listing's end_date, or until the start of the
 * machine's next maintenance window that has not ended, whichever comes first (docs/sync-maintenance.md).
 * A window in progress puts the end in the past, so the offer is not rentable until it is over.
 * The windows arrive as two array parameters (machine ids, next window starts; see NextWindows): a
 * per-row array lookup keeps the scan parallel and index-ordered, where a per-row subquery or a join
 * made the CLI's default search several times slower; with no window at all the SQL is unchanged.
 */
const rentableUntil = (c: SqlContext): string =>
  c.maintenance
    ? `LEAST(end_date, (${c.maintenance.starts})[array_position(${c.maintenance.machineIds}, machine_id)])`
    : 'end_date';
const dphTotal = (c: SqlContext) => `(${c.price} + storage_cost * ${c.storage} / ${HOURS_PER_MONTH}.0)`;

/** Every searchable (and orderable) field. Anything else is refused by name. */
export const OFFER_FIELDS: Readonly<Record<string, FieldSpec>> = {
  id: column('number', 'id'),
  ask_contract_id: column('number', 'id'),
  machine_id: column('number', 'machine_id'),
  host_id: column('number', 'host_id'),
  num_gpus: column('number', 'num_gpus'),
  gpu_name: column('string', 'gpu_name'),
  gpu_ram: column('number', 'gpu_ram'),
  gpu_total_ram: column('number', 'gpu_total_ram'),
  gpu_display_active: { kind: 'bool', sql: () => 'FALSE' },
  cpu_name: column('string', 'cpu_name'),
  cpu_cores: column('number', 'cpu_cores'),
  cpu_cores_effective: column('number', 'cpu_cores_effective'),
  cpu_ram: column('number', 'cpu_ram'),
  cpu_ghz: column('number', 'cpu_ghz'),
  disk_space: column('number', 'disk_space'),
  disk_bw: column('number', 'disk_bw'),
  disk_name: column('string', 'disk_name'),
  dph_base: { kind: 'number', sql: (c) => c.price },
  dph_total: { kind: 'number', sql: dphTotal },
  discounted_dph_total: { kind: 'number', sql: dphTotal },
  min_bid: column('number', 'min_bid'),
  credit_discount_max: column('number', 'credit_discount_max'),
  storage_cost: column('number', 'storage_cost'),
  inet_up: column('number', 'inet_up'),
  inet_down: column('number', 'inet_down'),
  inet_up_cost: column('number', 'inet_up_cost'),
  inet_down_cost: column('number', 'inet_down_cost'),
  reliability: column('number', 'reliability'),
  reliability2: column('number', 'reliability'),
  dlperf: column('number', 'dlperf'),
  dlperf_per_dphtotal: { kind: 'number', sql: (c) => `(dlperf / NULLIF(${dphTotal(c)}, 0))` },
  total_flops: column('number', 'total_flops'),
  flops_per_dphtotal: { kind: 'number', sql: (c) => `(total_flops / NULLIF(${dphTotal(c)}, 0))` },
  score: column('number', 'score'),
  cuda_max_good: column('number', 'cuda_max_good'),
  driver_version: column('number', 'driver_vers'),
  compute_cap: column('number', 'compute_cap'),
  pcie_bw: column('number', 'pcie_bw'),
  pci_gen: column('number', 'pci_gen'),
  direct_port_count: column('number', 'direct_port_count'),
  geolocation: column('string', 'geolocation'),
  public_ipaddr: column('string', 'public_ipaddr'),
  hostname: column('string', 'hostname'),
  verified: column('bool', 'verified'),
  verification: column('string', 'verification'),
  rentable: {
    kind: 'bool',
    sql: (c) => `(rentable AND (${rentableUntil(c)} IS NULL OR ${rentableUntil(c)} > ${c.now}))`,
  },
  rented: column('bool', 'rented'),
  external: column('bool', 'external'),
  start_date: column('number', 'start_date'),
  end_date: { kind: 'number', sql: rentableUntil },
  duration: { kind: 'number', sql: (c) => `(${rentableUntil(c)} - ${c.now})` },
  hosting_type: column('number', 'hosting_type'),
  datacenter: { kind: 'bool', sql: () => '(hosting_type = 1)' },
};

export const OFFER_ALIASES: Readonly<Record<string, string>> = {
  cuda_vers: 'cuda_max_good',
  dph: 'dph_total',
  dlperf_usd: 'dlperf_per_dphtotal',
  flops_usd: 'flops_per_dphtotal',
  display_active: 'gpu_display_active',
};

/** Body keys that steer the search rather than filter it. */
const CONTROL_KEYS = new Set([
  'order',
  'type',
  'limit',
  'allocated_storage',
  'select_cols',
  'q',
  'disable_bundling',
  'extra',
  'client_id',
  'user',
  'force',
  'api_key',
]);
const OPERATORS = new Set<Operator>(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'notin']);
const OPERATOR_ALIASES: Record<string, Operator> = {
  '=': 'eq',
  '==': 'eq',
  '!=': 'neq',
  '>': 'gt',
  '>=': 'gte',
  '<': 'lt',
  '<=': 'lte',
  nin: 'notin',
  not_in: 'notin',
  ne: 'neq',
};
/** `field=any` (also ? and *) means no filter on that field. */
const ANY = new Set(['any', '?', '*']);

export const canonicalField = (name: string): string => OFFER_ALIASES[name] ?? name;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function coerce(field: string, kind: FieldKind, raw: unknown): Scalar {
  if (raw === null) return null;
  switch (kind) {
    case 'number': {
      if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
      if (typeof raw === 'string') {
        const text = raw.trim();
        if (field === 'driver_version' && /^\d+\.\d+(\.\d+)?$/.test(text)) return driverVersionNumber(text);
        const value = Number(text);
        if (text !== '' && Number.isFinite(value)) return value;
      }
      if (typeof raw === 'boolean') return raw ? 1 : 0;
      break;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (raw === 1 || raw === 0) return raw === 1;
      if (typeof raw === 'string' && /^(true|false)$/i.test(raw.trim()))
        return raw.trim().toLowerCase() === 'true';
      break;
    }
    case 'string': {
      if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') {
        const text = String(raw);
        // The CLI turns `_` into a space in every value; gpu names match in either spelling.
        return field === 'gpu_name' ? text.replace(/_/g, ' ') : text;
      }
      break;
    }
  }
  throw ApiError.badRequest(`Invalid value ${JSON.stringify(raw)} for ${field}: expected a ${kind}`);
}

export function parseFilter(
  field: string,
  raw: unknown,
  fields: Readonly<Record<string, FieldSpec>> = OFFER_FIELDS,
): Filter[] {
  const spec = fields[field]!;
  if (typeof raw === 'string' && ANY.has(raw.trim().toLowerCase())) return [];
  const ops: Record<string, unknown> = isPlainObject(raw) ? raw : { eq: raw };
  const filters: Filter[] = [];
  for (const [rawOp, value] of Object.entries(ops)) {
    const op = (OPERATOR_ALIASES[rawOp] ?? rawOp) as Operator;
    if (!OPERATORS.has(op))
      throw ApiError.badRequest(
        `Unknown operator ${rawOp} for ${field}: use eq, neq, gt, gte, lt, lte, in, notin`,
      );
    if (typeof value === 'string' && ANY.has(value.trim().toLowerCase())) continue;
    if (op === 'in' || op === 'notin') {
      // The spec: "in (value is an array)". A scalar is a mistake to name, not a list of one.
      if (!Array.isArray(value))
        throw ApiError.badRequest(
          `${field} ${op} takes an array, e.g. {"${op}": [${JSON.stringify(value)}]}`,
        );
      filters.push({ field, op, value: value.map((v) => coerce(field, spec.kind, v)) });
    } else {
      if (Array.isArray(value) || isPlainObject(value))
        throw ApiError.badRequest(`${field} ${op} takes a single value`);
      const v = coerce(field, spec.kind, value);
      if (v === null && op !== 'eq' && op !== 'neq')
        throw ApiError.badRequest(`${field} ${op} needs a value, not null`);
      filters.push({ field, op, value: v });
    }
  }
  return filters;
}

function parseType(raw: unknown): OfferType {
  if (raw === undefined || raw === null) return 'on-demand';
  const text = String(raw).toLowerCase();
  if (text === 'on-demand' || text === 'ondemand') return 'on-demand';
  if (text === 'bid' || text === 'interruptible') return 'bid';
  if (text === 'reserved') return 'reserved';
  throw ApiError.badRequest(`Invalid type ${JSON.stringify(raw)}: use on-demand, ondemand, bid or reserved`);
}

function parseNumber(name: string, raw: unknown, fallback: number): number {
  if (raw === undefined || raw === null) return fallback;
  const value = coerce(name, 'number', raw);
  if (typeof value !== 'number' || value < 0) throw ApiError.badRequest(`${name} must be a number >= 0`);
  return value;
}

function parseOrder(raw: unknown): OfferQuery['order'] {
  if (raw === undefined || raw === null) return [{ field: 'score', direction: 'desc' }];
  const list: unknown[] = Array.isArray(raw) ? raw : [raw];
  // A single pair ["dph_total","asc"] is accepted as well as a list of pairs.
  const pairs =
    list.length === 2 && typeof list[0] === 'string' && /^(asc|desc)$/i.test(String(list[1])) ? [list] : list;
  return pairs.map((pair) => {
    const [rawField, rawDirection] = Array.isArray(pair) ? pair : [pair, 'asc'];
    const field = canonicalField(String(rawField));
    if (!OFFER_FIELDS[field]) throw ApiError.badRequest(`Unknown order field: ${String(rawField)}`);
    const direction = String(rawDirection ?? 'asc').toLowerCase();
    if (direction !== 'asc' && direction !== 'desc')
      throw ApiError.badRequest(`Invalid order direction ${String(rawDirection)}: use asc or desc`);
    return { field, direction };
  });
}

/** Parses a bundles body (or the `q` of PUT /search/asks/). */
export function parseOfferQuery(body: unknown): OfferQuery {
  if (!isPlainObject(body)) throw ApiError.badRequest('The search body must be a JSON object');
  const source = isPlainObject(body.q) ? { ...body, ...body.q } : body;
  const filters: Filter[] = [];
  for (const [key, raw] of Object.entries(source)) {
    if (CONTROL_KEYS.has(key)) continue;
    const field = canonicalField(key);
    if (!OFFER_FIELDS[field]) throw ApiError.badRequest(`Unknown filter field: ${key}`, { field: key });
    filters.push(...parseFilter(field, raw));
  }
  const limit = Math.floor(parseNumber('limit', source.limit, DEFAULT_LIMIT));
  return {
    filters,
    order: parseOrder(source.order),
    type: parseType(source.type),
    limit: Math.min(Math.max(limit, 1), MAX_LIMIT),
    allocatedStorage: parseNumber('allocated_storage', source.allocated_storage, DEFAULT_STORAGE_GB),
  };
}

const PRICE_COLUMN: Record<OfferType, string> = {
  'on-demand': 'dph_base',
  bid: 'min_bid',
  reserved: '(dph_base * (1 - credit_discount_max))',
};

const SQL_OPS: Record<Exclude<Operator, 'in' | 'notin'>, string> = {
  eq: '=',
  neq: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

/** Offer fields computed per query; the rest are columns of the row. */
export const COMPUTED_OUTPUT: readonly string[] = [
  'dph_total',
  'discounted_dph_total',
  'dlperf_per_dphtotal',
  'flops_per_dphtotal',
  'duration',
  'rentable',
  'end_date',
];

/**
 * SELECT over the offers read model. Semantics (shared with the differential test's in-memory filter):
 * eq/gt/gte/lt/lte/in never match NULL; neq/notin do; eq null is IS NULL; NULLs sort last; ties by id.
 */
/** Machines with a maintenance window that has not ended, and the start of their next one (epoch s). */
export interface NextWindows {
  machineIds: number[];
  starts: number[];
}

export function offerSearchSql(
  query: OfferQuery,
  schema: string,
  nowEpochSeconds: number,
  windows?: NextWindows,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [query.allocatedStorage, nowEpochSeconds];
  const ctx: SqlContext = { price: PRICE_COLUMN[query.type], storage: '$1::float8', now: '$2::float8' };
  if (windows && windows.machineIds.length > 0) {
    params.push(windows.machineIds, windows.starts);
    ctx.maintenance = { machineIds: '$3::int[]', starts: '$4::float8[]' };
  }
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = filterSql(query.filters, OFFER_FIELDS, ctx, param);
  const order = [
    ...query.order.map((o) => {
      const spec = OFFER_FIELDS[o.field]!;
      return `${spec.sql(ctx)}${spec.kind === 'string' ? ' COLLATE "C"' : ''} ${o.direction.toUpperCase()} NULLS LAST`;
    }),
    // The table's id: a bare `id` would name the output column (id::float8), which no index orders.
    'offers.id ASC',
  ];
  const sql = `SELECT ${offerOutputColumns(query, ctx)} FROM ${schema}.offers
    ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY ${order.join(', ')} LIMIT ${param(query.limit)}`;
  return { sql, params };
}

/**
 * The SELECT list that makes each row the API's offer object as it is (OfferView, in its key order): per-query
 * fields computed in place, ids as numbers, driver_vers left out, the constant fields added. The database does
 * the shaping, so the handler sends the rows unchanged (reshaping every row in JavaScript cost more than the
 * query itself on PGlite).
 */
function offerOutputColumns(query: OfferQuery, ctx: SqlContext): string {
  const computed = new Set(COMPUTED_OUTPUT);
  const columns: string[] = OFFER_OUTPUT_COLUMNS.map((name) =>
    name === 'id'
      ? 'id::float8 AS id'
      : computed.has(name)
        ? `${OFFER_FIELDS[name]!.sql(ctx)} AS ${name}`
        : name,
  );
  for (const name of COMPUTED_OUTPUT) {
    if (!OFFER_OUTPUT_COLUMNS.includes(name)) columns.push(`${OFFER_FIELDS[name]!.sql(ctx)} AS ${name}`);
  }
  columns.push(
    'id::float8 AS ask_contract_id',
    'id::float8 AS bundle_id',
    `${query.type === 'bid' ? 'TRUE' : 'FALSE'} AS is_bid`,
    'FALSE AS gpu_display_active',
    `'amd64'::text AS cpu_arch`,
  );
  return columns.join(', ');
}

/** WHERE terms for parsed filters over a field registry; values only ever become parameters. */
export function filterSql(
  filters: readonly Filter[],
  fields: Readonly<Record<string, FieldSpec>>,
  ctx: SqlContext,
  param: (value: unknown) => string,
): string[] {
  const cast = (kind: FieldKind) =>
    kind === 'number' ? '::float8' : kind === 'bool' ? '::boolean' : '::text';
  return filters.map(({ field, op, value }) => {
    const spec = fields[field]!;
    const expr = spec.sql(ctx);
    if (op === 'in' || op === 'notin') {
      const list = (value as Scalar[]).filter((v) => v !== null);
      const hasNull = (value as Scalar[]).some((v) => v === null);
      const arrayCast = `${cast(spec.kind)}[]`;
      const anyOf = `${expr}${cast(spec.kind)} = ANY(${param(list)}${arrayCast})${hasNull ? ` OR ${expr} IS NULL` : ''}`;
      // In a WHERE clause NULL already excludes the row, so `in` needs no COALESCE (which hid the
      // expression from the planner's indexes); `notin` does, so that NULL rows pass.
      return op === 'in' ? `(${anyOf})` : `NOT COALESCE(${anyOf}, FALSE)`;
    }
    if (value === null) return op === 'eq' ? `${expr} IS NULL` : `${expr} IS NOT NULL`;
    // A coerced boolean is written as the bare predicate (no user text reaches the SQL), so the planner
    // can match partial indexes such as offers_by_score's `WHERE verified AND rentable AND NOT external`.
    if (spec.kind === 'bool' && op === 'eq' && typeof value === 'boolean')
      return value ? expr : `NOT ${expr}`;
    if (op === 'neq') return `${expr} IS DISTINCT FROM ${param(value)}${cast(spec.kind)}`;
    // Byte order for string ranges, so results do not depend on the database's locale. Not for equality: a
    // deterministic collation's = is byte equality already, and a COLLATE "C" there kept the planner from
    // using the indexes on gpu_name (default collation).
    const collate = spec.kind === 'string' && op !== 'eq' ? ' COLLATE "C"' : '';
    return `${expr}${collate} ${SQL_OPS[op]} ${param(value)}${cast(spec.kind)}`;
  });
}
