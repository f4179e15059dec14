import { ApiError } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { isJsonObject } from '@rigmarket/http-kit';
import { SCHEMA } from '../schema';

/**
 * The fields `vastai search benchmarks` may filter and order by (the CLI's `benchmarks_fields`). Rigmarket's
 * records come from the host agents, not from serverless templates: the template, contract, image and
 * launch fields are always null (a filter on their value matches nothing).
 */
const FIELDS: Record<string, string | null> = {
  id: 'id',
  machine_id: 'machine_id',
  gpu_name: 'gpu_name',
  num_gpus: 'num_gpus',
  type: 'type',
  value: 'value',
  dph_base: 'dph_base',
  last_update: 'last_update',
  contract_id: null,
  image: null,
  launch_args: null,
  template_hash: null,
  template_id: null,
};
const NUMERIC = new Set(['id', 'machine_id', 'num_gpus', 'value', 'dph_base', 'last_update']);
const COMPARE: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const PAGE = 200;

const parsed = (raw: unknown, name: string): unknown => {
  if (typeof raw !== 'string' || raw === '') return raw === '' ? undefined : raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw ApiError.badRequest(`${name} must be JSON`);
  }
};

const fieldOf = (name: string): string | null => {
  if (!(name in FIELDS)) throw ApiError.badRequest(`Unknown benchmark field "${name}"`);
  return FIELDS[name] ?? null;
};

/**
 * A value compared with a column, as `search benchmarks` sends it: numbers often as strings ("0"), and
 * underscores turned into spaces ("disk_write" -> "disk write"; stored types compare the same way).
 */
const operand = (col: string, value: unknown): string | number => {
  if (NUMERIC.has(col)) {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n === 'number' && Number.isFinite(n)) return n;
    throw ApiError.badRequest(`${col} is compared with numbers`);
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.length <= 256) return value.replace(/_/g, ' ');
  if (typeof value === 'boolean') return String(value);
  throw ApiError.badRequest('benchmark filter values must be numbers or strings');
};

/** `select_filters` ({field: {op: value}}) to SQL conditions over the benchmarks table. */
function conditions(filters: unknown, params: unknown[]): string[] {
  if (filters === undefined || filters === null) return [];
  if (!isJsonObject(filters)) throw ApiError.badRequest('select_filters must be an object');
  const where: string[] = [];
  const param = (col: string, value: unknown) => {
    params.push(operand(col, value));
    return `$${params.length}::${NUMERIC.has(col) ? 'double precision' : 'text'}`;
  };
  const column = (col: string) => (NUMERIC.has(col) ? col : `REPLACE(${col}, '_', ' ')`);
  for (const [name, spec] of Object.entries(filters).slice(0, 32)) {
    const col = fieldOf(name);
    for (const [op, value] of Object.entries(isJsonObject(spec) ? spec : { eq: spec })) {
      const negated = op === 'notin' || op === 'nin' || op === 'neq';
      if (op === 'in' || op === 'notin' || op === 'nin') {
        if (!Array.isArray(value) || value.length > 100)
          throw ApiError.badRequest(`${name}.${op} must be a list (at most 100 values)`);
        // a field Rigmarket leaves null, or an empty list, matches nothing (in) or everything (not in)
        if (col === null || value.length === 0) where.push(negated ? 'TRUE' : 'FALSE');
        else
          where.push(
            `${negated ? 'NOT ' : ''}(${column(col)} IN (${value.map((v) => param(col, v)).join(', ')}))`,
          );
        continue;
      }
      const sqlOp = COMPARE[op];
      if (!sqlOp) throw ApiError.badRequest(`Unknown operator "${op}" on ${name}`);
      if (col === null)
        where.push(value === null ? (negated ? 'FALSE' : 'TRUE') : negated ? 'TRUE' : 'FALSE');
      else if (value === null) where.push(`${col} IS ${negated ? 'NOT ' : ''}NULL`);
      else where.push(`${column(col)} ${sqlOp} ${param(col, value)}`);
    }
  }
  return where;
}

/** `order_by` ([{col, dir}]); default newest first. */
function ordering(raw: unknown): string {
  if (raw === undefined || raw === null) return 'last_update DESC, id DESC';
  if (!Array.isArray(raw)) throw ApiError.badRequest('order_by must be a list of {col, dir}');
  const keys = raw.slice(0, 8).map((o: unknown) => {
    if (!isJsonObject(o) || typeof o.col !== 'string')
      throw ApiError.badRequest('order_by must be a list of {col, dir}');
    const dir = String(o.dir ?? 'asc').toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw ApiError.badRequest('order_by dir must be asc or desc');
    const col = fieldOf(o.col);
    return col === null ? null : `${col} ${dir.toUpperCase()}`;
  });
  return [...keys.filter((k): k is string => k !== null), 'id DESC'].join(', ');
}

/**
 * GET /api/v0/benchmarks: every machine's records (as the real service, market-wide), filtered, ordered, a
 * page of `limit` (at most 200) after `after_token`, the next page's token when there is one.
 */
export async function searchBenchmarks(sql: Sql, query: Record<string, unknown>) {
  const params: unknown[] = [];
  const where = conditions(parsed(query.select_filters, 'select_filters'), params);
  const order = ordering(parsed(query.order_by, 'order_by'));
  const limit = query.limit === undefined ? PAGE : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE)
    throw ApiError.badRequest(`limit must be an integer from 1 to ${PAGE}`);
  const offset = query.after_token === undefined || query.after_token === '' ? 0 : Number(query.after_token);
  if (!Number.isInteger(offset) || offset < 0 || offset > 1_000_000_000)
    throw ApiError.badRequest('after_token is not a token of this list');
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT * FROM ${SCHEMA}.benchmarks ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${order} LIMIT ${limit + 1} OFFSET ${offset}`,
    params,
  );
  const page = rows.slice(0, limit).map((row) => ({
    id: Number(row.id),
    machine_id: Number(row.machine_id),
    gpu_name: row.gpu_name,
    num_gpus: Number(row.num_gpus),
    type: row.type,
    value: Number(row.value),
    dph_base: row.dph_base === null ? null : Number(row.dph_base),
    last_update: Number(row.last_update),
    contract_id: null,
    image: null,
    launch_args: null,
    template_hash: null,
    template_id: null,
  }));
  return {
    success: true,
    benchmarks_found: page.length,
    benchmarks: page,
    next_token: rows.length > limit ? String(offset + limit) : null,
  };
}
