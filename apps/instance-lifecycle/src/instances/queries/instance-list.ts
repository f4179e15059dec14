import { ApiError } from '@rigmarket/contracts';
import { INSTANCE_VERIFICATION } from '../../read-models/market-machines/queries';
import { isJsonObject } from '@rigmarket/http-kit';

/** Columns of the v1 list that select_filters and order_by may name. */
const COLUMNS: Record<string, string> = {
  id: 'instance_id',
  actual_status: 'actual_status',
  intended_status: 'intended_status',
  cur_state: 'intended_status',
  label: 'label',
  gpu_name: 'gpu_name',
  machine_id: 'machine_id',
  num_gpus: 'num_gpus',
  dph_total: 'dph_total',
  start_date: 'start_date',
  verification: INSTANCE_VERIFICATION,
};

const TEXT_COLUMNS = new Set([
  'actual_status',
  'intended_status',
  'label',
  'gpu_name',
  INSTANCE_VERIFICATION,
]);

const OPS: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** One key of the list's order: its SQL, its direction and the row field that holds its value. */
export interface SortKey {
  col: string;
  dir: 'ASC' | 'DESC';
  field: string;
}

export interface ListQuery {
  where: string[];
  params: unknown[];
  orderBy: string;
  keys: SortKey[];
  limit: number;
  /** The page starts after the row with these sort key values (keyset pagination; null: the first page). */
  after: unknown[] | null;
  /** A token of an older server: an offset into the list. */
  offset: number;
}

function json(raw: unknown, name: string): unknown {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw ApiError.badRequest(`${name} must be JSON`);
  }
}

function column(name: string): string {
  const col = COLUMNS[name];
  if (!col)
    throw ApiError.badRequest(
      `Unknown instance field "${name}"; use one of ${Object.keys(COLUMNS).join(', ')}`,
    );
  return col;
}

const scalar = (col: string, value: unknown): unknown =>
  TEXT_COLUMNS.has(col) ? (value === null ? null : String(value)) : Number(value);

/**
 * after_token: opaque to clients (base64url JSON): the sort key values of the page's last row, so the next
 * page is a keyset condition on an index range, never an OFFSET that reads and drops the rows before it.
 */
export function encodeToken(keys: readonly SortKey[], row: object): string {
  const fields = row as Readonly<Record<string, unknown>>;
  return Buffer.from(JSON.stringify({ k: keys.map((k) => fields[k.field] ?? null) })).toString('base64url');
}

const badToken = () => ApiError.badRequest('after_token is not a token this server issued');

function decodeToken(raw: unknown, keys: readonly SortKey[]): { after: unknown[] | null; offset: number } {
  if (raw === undefined || raw === null || raw === '') return { after: null, offset: 0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(String(raw), 'base64url').toString('utf8'));
  } catch {
    throw badToken();
  }
  if (!isJsonObject(parsed)) throw badToken();
  // Tokens of servers before keyset pagination carried an offset.
  if (typeof parsed.o === 'number' && Number.isInteger(parsed.o) && parsed.o >= 0)
    return { after: null, offset: parsed.o };
  const values = parsed.k;
  if (!Array.isArray(values) || values.length !== keys.length) throw badToken();
  const after = values.map((v: unknown, i) => {
    if (v === null) return null;
    const text = TEXT_COLUMNS.has(keys[i]!.col);
    if (text ? typeof v !== 'string' : typeof v !== 'number' || !Number.isFinite(v)) throw badToken();
    return v;
  });
  return { after, offset: 0 };
}

/**
 * The rows after `values` in the order of `keys` (PostgreSQL's defaults: NULLS LAST ascending, NULLS FIRST
 * descending): (k1 after v1) OR (k1 = v1 AND k2 after v2) OR ... Appends its parameters to `params`.
 */
export function keysetAfter(keys: readonly SortKey[], values: readonly unknown[], params: unknown[]): string {
  const alternatives: string[] = [];
  const equal: string[] = [];
  keys.forEach(({ col, dir }, i) => {
    const value = values[i] ?? null;
    let after: string | null;
    if (value === null) {
      after = dir === 'ASC' ? null : `${col} IS NOT NULL`;
      equal.push(`${col} IS NULL`);
    } else {
      const ref = `$${params.push(value)}`;
      after = dir === 'ASC' ? `(${col} > ${ref} OR ${col} IS NULL)` : `${col} < ${ref}`;
      equal.push(`${col} = ${ref}`);
    }
    if (after !== null) alternatives.push([...equal.slice(0, i), after].join(' AND '));
  });
  return alternatives.length === 0 ? 'FALSE' : `(${alternatives.join(' OR ')})`;
}

/** GET /api/v1/instances/ query: select_filters, order_by, limit (1..25), after_token. */
export function parseListQuery(query: Record<string, unknown>, ownerId: number): ListQuery {
  const params: unknown[] = [ownerId];
  const where = ['owner_id = $1', 'NOT destroyed'];
  const filters = json(query.select_filters, 'select_filters') ?? {};
  if (!isJsonObject(filters)) throw ApiError.badRequest('select_filters must be an object');
  for (const [field, condition] of Object.entries(filters)) {
    const col = column(field);
    const ops = isJsonObject(condition) ? condition : { eq: condition };
    for (const [op, value] of Object.entries(ops)) {
      if (op === 'in' || op === 'notin' || op === 'nin') {
        if (!Array.isArray(value)) throw ApiError.badRequest(`${field}.${op} must be a list`);
        const values = value.filter((v) => v !== null).map((v) => scalar(col, v));
        const withNull = value.some((v) => v === null);
        params.push(values);
        const ref = `$${params.length}`;
        where.push(
          op === 'in'
            ? `(${col} = ANY(${ref})${withNull ? ` OR ${col} IS NULL` : ''})`
            : `(NOT (${col} = ANY(${ref})) OR ${col} IS NULL)${withNull ? ` AND ${col} IS NOT NULL` : ''}`,
        );
      } else {
        const sqlOp = OPS[op];
        if (!sqlOp) throw ApiError.badRequest(`Unknown operator "${op}" on ${field}`);
        if (value === null && (op === 'eq' || op === 'neq')) {
          where.push(`${col} IS ${op === 'eq' ? '' : 'NOT '}NULL`);
          continue;
        }
        params.push(scalar(col, value));
        where.push(`${col} ${sqlOp} $${params.length}`);
      }
    }
  }
  const order = json(query.order_by, 'order_by') ?? [{ col: 'id', dir: 'asc' }];
  if (!Array.isArray(order)) throw ApiError.badRequest('order_by must be a list of {col, dir}');
  const keys: SortKey[] = order.map((o: unknown) => {
    if (!isJsonObject(o) || typeof o.col !== 'string')
      throw ApiError.badRequest('order_by must be a list of {col, dir}');
    const dir = String(o.dir ?? 'asc').toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw ApiError.badRequest('order_by dir must be asc or desc');
    const col = column(o.col);
    return {
      col,
      dir: dir === 'asc' ? 'ASC' : 'DESC',
      field: col === INSTANCE_VERIFICATION ? 'verification' : col,
    };
  });
  if (!keys.some((k) => k.col === 'instance_id'))
    keys.push({ col: 'instance_id', dir: 'ASC', field: 'instance_id' });
  const limit = query.limit === undefined || query.limit === '' ? 25 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 25)
    throw ApiError.badRequest('limit must be an integer from 1 to 25');
  const orderBy = keys.map((k) => `${k.col} ${k.dir}`).join(', ');
  return { where, params, orderBy, keys, limit, ...decodeToken(query.after_token, keys) };
}
