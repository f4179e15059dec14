import { ApiError } from '@rigmarket/contracts';
import { INSTANCE_VERIFICATION } from '../../read-models/market-machines/queries';
import { decodeOffsetToken, encodeOffsetToken, isJsonObject } from '@rigmarket/http-kit';

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

export interface ListQuery {
  where: string[];
  params: unknown[];
  orderBy: string;
  limit: number;
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

/** after_token: an opaque offset cursor (http-kit's offset-token.ts). */
export const encodeToken = encodeOffsetToken;

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
  const parts = order.map((o: unknown) => {
    if (!isJsonObject(o) || typeof o.col !== 'string')
      throw ApiError.badRequest('order_by must be a list of {col, dir}');
    const dir = String(o.dir ?? 'asc').toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw ApiError.badRequest('order_by dir must be asc or desc');
    return `${column(o.col)} ${dir.toUpperCase()}`;
  });
  if (!parts.some((p) => p.startsWith('instance_id '))) parts.push('instance_id ASC');
  const limit = query.limit === undefined || query.limit === '' ? 25 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 25)
    throw ApiError.badRequest('limit must be an integer from 1 to 25');
  return { where, params, orderBy: parts.join(', '), limit, offset: decodeOffsetToken(query.after_token) };
}
