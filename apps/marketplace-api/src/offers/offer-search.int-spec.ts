import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import { Database, eventStoreMigration, runMigrations } from '@rigmarket/event-sourcing';
import { createTestDatabase } from '@rigmarket/testing';
import { marketplaceContext } from '../marketplace.context';
import { insertOfferRows } from '../read-models/machines/offers';
import { HOURS_PER_MONTH, type OfferQuery, offerSearchSql, parseOfferQuery } from './offer-query';
import type { OfferRow } from './offer-rows';
import { CLI_DEFAULTS, EXAMPLE_SEARCHES } from './example-searches';
import { cacheableQuery } from './offer-search-cache';
import { nextMaintenanceWindows, searchOffers, searchOffersJson, searchOffersTimed } from './offers.handlers';
import { syntheticOfferRows } from './synthetic-offers';

/**
 * Differential test: 100,000 offers in PostgreSQL; every query's SQL result (ids, in order) must equal
 * a straightforward in-memory filter and sort over the same rows.
 */
const COUNT = 100_000;
const NOW = new Date(1_780_000_000_000);
const now = NOW.getTime() / 1000;

type Value = number | string | boolean | null;

/** The obvious reading of each field, written independently of the SQL builder. */
function fieldValue(row: OfferRow, field: string, q: OfferQuery): Value {
  const price =
    q.type === 'bid'
      ? row.min_bid
      : q.type === 'reserved'
        ? row.dph_base * (1 - row.credit_discount_max)
        : row.dph_base;
  const dphTotal = price + (row.storage_cost * q.allocatedStorage) / HOURS_PER_MONTH;
  switch (field) {
    case 'dph_total':
    case 'discounted_dph_total':
      return dphTotal;
    case 'dph_base':
      return price;
    case 'dlperf_per_dphtotal':
      return dphTotal === 0 ? null : row.dlperf / dphTotal;
    case 'flops_per_dphtotal':
      return dphTotal === 0 ? null : row.total_flops / dphTotal;
    case 'duration':
      return row.end_date === null ? null : row.end_date - now;
    case 'rentable':
      return row.rentable && (row.end_date === null || row.end_date > now);
    case 'driver_version':
      return row.driver_vers;
    case 'reliability2':
      return row.reliability;
    case 'ask_contract_id':
      return row.id;
    case 'datacenter':
      return row.hosting_type === 1;
    case 'gpu_display_active':
      return false;
    default:
      return (row as unknown as Record<string, Value>)[field] ?? null;
  }
}

function matches(row: OfferRow, q: OfferQuery): boolean {
  return q.filters.every(({ field, op, value }) => {
    const v = fieldValue(row, field, q);
    if (op === 'in' || op === 'notin') {
      const list = value as Value[];
      const inList = v === null ? list.includes(null) : list.includes(v);
      return op === 'in' ? inList : !inList;
    }
    if (value === null) return op === 'eq' ? v === null : v !== null;
    if (op === 'eq') return v === value;
    if (op === 'neq') return v !== value;
    if (v === null) return false;
    if (op === 'gt') return v > value;
    if (op === 'gte') return v >= value;
    if (op === 'lt') return v < value;
    return v <= value;
  });
}

function compare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function inMemory(rows: readonly OfferRow[], body: unknown): number[] {
  const q = parseOfferQuery(body);
  return rows
    .filter((row) => matches(row, q))
    .sort((x, y) => {
      for (const { field, direction } of q.order) {
        const a = fieldValue(x, field, q);
        const b = fieldValue(y, field, q);
        // NULLS LAST in both directions
        if (a === null || b === null) {
          const c = compare(a, b);
          if (c !== 0) return c;
          continue;
        }
        const c = compare(a, b) * (direction === 'desc' ? -1 : 1);
        if (c !== 0) return c;
      }
      return x.id - y.id;
    })
    .slice(0, q.limit)
    .map((row) => row.id);
}

const BID_SEARCH =
  EXAMPLE_SEARCHES[
    'bid, gpu_ram>=24 geolocation in [US,CA] reliability>0.98, order dph+,num_gpus-, limit 5'
  ]!;
const withoutKeys = (body: Readonly<Record<string, unknown>>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(body).filter(([key]) => !keys.includes(key)));

/** Hand-written cases, type coercion included (values as the CLI sends them: strings, `_`, aliases). */
const CASES: Array<[string, Record<string, unknown>]> = [
  [
    'CLI default search',
    { ...EXAMPLE_SEARCHES['CLI default: gpu_name=RTX_4090 num_gpus>=2 (order score-)'] },
  ],
  ['gpu name with underscores', { gpu_name: { eq: 'RTX_4090' }, order: [['dph', 'asc']], limit: 50 }],
  [
    'numeric strings and aliases',
    {
      dph: { lt: '1.5' },
      cuda_vers: { gte: '12.2' },
      reliability: { gt: '0.98' },
      order: [['dlperf_usd', 'desc']],
      limit: 200,
    },
  ],
  // The bench's bid search without its rentable and external filters: no partial index applies, a scan.
  ['gpu_ram in MB as floats', withoutKeys(BID_SEARCH, ['rentable', 'external', 'reliability'])],
  [
    'booleans as strings',
    {
      verified: { eq: 'true' },
      rented: { eq: 'False' },
      external: { neq: 'true' },
      order: [['id', 'asc']],
      limit: 300,
    },
  ],
  [
    'driver version dotted and integer',
    {
      driver_version: { gte: '550.54.15' },
      num_gpus: { in: ['1', 2, '4'] },
      order: [['driver_version', 'desc']],
      limit: 100,
    },
  ],
  ['driver version integer', { driver_version: { lt: 545023008 }, order: [['score', 'desc']], limit: 40 }],
  [
    'notin with null geolocation',
    { geolocation: { notin: ['US', 'SE', null] }, order: [['geolocation', 'asc']], limit: 500 },
  ],
  [
    'eq null',
    { geolocation: { eq: null }, pcie_bw: { neq: null }, order: [['pcie_bw', 'desc']], limit: 100 },
  ],
  ['nulls sort last', { order: [['cpu_ghz', 'asc']], limit: 1000, num_gpus: { eq: '8' } }],
  [
    'reserved pricing',
    { type: 'reserved', dph_total: { lte: '0.8' }, order: [['dph_total', 'desc']], limit: 100 },
  ],
  [
    'storage affects dph_total',
    { allocated_storage: '500', dph: { lt: 1 }, order: [['flops_usd', 'desc']], limit: 100 },
  ],
  [
    'duration in seconds',
    {
      duration: { gte: String(30 * 86400) },
      rentable: { eq: true },
      order: [['duration', 'asc']],
      limit: 100,
    },
  ],
  [
    'string range in byte order',
    {
      gpu_name: { gte: 'RTX 4' },
      hosting_type: { eq: '1' },
      order: [
        ['gpu_name', 'desc'],
        ['id', 'desc'],
      ],
      limit: 100,
    },
  ],
  [
    'several operators on one field',
    {
      disk_space: { gte: 1, gt: '50', lte: '2000' },
      inet_up: { gt: '500' },
      order: [['score', 'desc']],
      limit: 3,
    },
  ],
  ['any removes a filter', { verified: 'any', rentable: { eq: 'any' }, num_gpus: { eq: 4 }, limit: 10 }],
  ['nothing matches', { num_gpus: { gt: 1000 } }],
  ['max limit', { limit: 1000 }],
];

/**
 * Price orders at the CLI's default storage (5 GB), which migration 0023 indexes: each is read from its index
 * (the EXPLAIN check below), and the differential test checks the order it reads.
 */
const INDEXED_PRICE_ORDERS: Array<[string, string, Readonly<Record<string, unknown>>]> = [
  [
    'by dph, CLI defaults',
    'offers_by_dph_on_demand',
    { ...CLI_DEFAULTS, order: [['dph', 'asc']], type: 'on-demand', allocated_storage: 5.0, limit: 64 },
  ],
  [
    'bid by dph then GPUs, filtered, limit 5',
    'offers_by_dph_bid',
    EXAMPLE_SEARCHES[
      'bid, gpu_ram>=24 geolocation in [US,CA] reliability>0.98, order dph+,num_gpus-, limit 5'
    ]!,
  ],
  [
    'by dlperf_usd, dph<1 cuda>=12.2',
    'offers_by_dlperf_usd_on_demand',
    EXAMPLE_SEARCHES['dph<1 cuda_vers>=12.2, order dlperf_usd-']!,
  ],
  [
    'by flops_usd, 4 GPUs or more',
    'offers_by_flops_usd_on_demand',
    {
      ...CLI_DEFAULTS,
      num_gpus: { gte: '4' },
      order: [['flops_usd', 'desc']],
      type: 'on-demand',
      allocated_storage: '5',
      limit: 20,
    },
  ],
];

function randomCases(count: number): Array<[string, Record<string, unknown>]> {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const numeric = [
    'num_gpus',
    'gpu_ram',
    'dph_total',
    'reliability',
    'dlperf',
    'inet_down',
    'direct_port_count',
    'cpu_ram',
    'disk_space',
    'score',
    'pcie_bw',
    'cuda_max_good',
  ];
  const ranges: Record<string, [number, number]> = {
    num_gpus: [1, 8],
    gpu_ram: [8000, 82000],
    dph_total: [0, 10],
    reliability: [0.8, 1],
    dlperf: [0, 500],
    inet_down: [0, 2000],
    direct_port_count: [0, 200],
    cpu_ram: [32000, 256000],
    disk_space: [0, 4000],
    score: [0, 500],
    pcie_bw: [0, 50],
    cuda_max_good: [11.8, 12.6],
  };
  const cases: Array<[string, Record<string, unknown>]> = [];
  for (let i = 0; i < count; i += 1) {
    const body: Record<string, unknown> = rand() < 0.5 ? { ...CLI_DEFAULTS } : {};
    for (let f = 0; f < 1 + Math.floor(rand() * 3); f += 1) {
      const field = pick(numeric);
      const [lo, hi] = ranges[field]!;
      const value = Math.round((lo + rand() * (hi - lo)) * 100) / 100;
      body[field] = { [pick(['gt', 'gte', 'lt', 'lte'])]: rand() < 0.5 ? String(value) : value };
    }
    if (rand() < 0.3)
      body.geolocation = { [pick(['in', 'notin'])]: [pick(['US', 'CA', 'SE']), pick(['TW', 'DE', 'JP'])] };
    body.order = [[pick([...numeric, 'dlperf_per_dphtotal', 'id']), pick(['asc', 'desc'])]];
    body.type = pick(['on-demand', 'ondemand', 'bid', 'reserved']);
    body.limit = pick([1, 10, 64, 500]);
    body.allocated_storage = pick([1, 5.0, '20', 100]);
    cases.push([`random #${i + 1}`, body]);
  }
  return cases;
}

/** Where two texts part, with some context (readable where a whole answer would not be); null when equal. */
function firstDifference(a: string, b: string): { at: number; actual: string; expected: string } | null {
  if (a === b) return null;
  let at = 0;
  while (a[at] === b[at]) at += 1;
  return {
    at,
    actual: a.slice(Math.max(0, at - 60), at + 60),
    expected: b.slice(Math.max(0, at - 60), at + 60),
  };
}

describe('offer search at 100,000 offers: SQL against an in-memory filter (PostgreSQL)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const rows = syntheticOfferRows(COUNT, 42, now);

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await Database.connect({ kind: 'postgres', url: database.url });
    await runMigrations(db, CONTEXT_SCHEMAS.marketplace, [
      eventStoreMigration,
      ...marketplaceContext.migrations,
    ]);
    await db.transaction((sql) => insertOfferRows(sql, rows));
    await db.execute(`ANALYZE marketplace.offers`);
  }, 300_000);
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('holds all the rows', async () => {
    const [{ n }] = (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM marketplace.offers`)) as [
      { n: string },
    ];
    expect(Number(n)).toBe(COUNT);
  });

  it.each([
    ...CASES,
    ...INDEXED_PRICE_ORDERS.map(([name, , body]) => [name, body] as const),
    ...randomCases(60),
  ])('%s', async (_name, body) => {
    const expected = inMemory(rows, body);
    const actual = (await searchOffers(db, parseOfferQuery(body), NOW)).map((o) => o.id);
    expect(actual).toEqual(expected);
  });

  // Without these indexes each of these searches scanned every offer its filters left (12-40 ms at 100,000
  // offers); an expression written differently from the index's would silently bring the scan back.
  it.each(INDEXED_PRICE_ORDERS)('%s: read in order from %s', async (_name, index, body) => {
    const { sql, params } = offerSearchSql(parseOfferQuery(body), 'marketplace', now);
    const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${sql}`, params))
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain(`Index Scan using ${index} on offers`);
    expect(plan).not.toMatch(/Seq Scan|Bitmap/);
  });

  // The answer is the database's JSON text, sent as is: it must be the very text that reading the rows one
  // by one and serialising them in Node (the answer before) gave, key order and number forms included.
  it.each(CASES)('%s: the JSON text equals the rows serialised in Node', async (_name, body) => {
    const query = parseOfferQuery(body);
    const text = await searchOffersJson(db, query, NOW);
    const { sql, params } = offerSearchSql(
      query,
      'marketplace',
      now,
      await nextMaintenanceWindows(db, now, 'marketplace'),
    );
    const before = JSON.stringify(await db.query(sql, params));
    expect(firstDifference(text, before)).toBeNull();
    expect(text).toBe(before);
  });

  // The answer cache (offer-search-cache.ts) keeps an answer until the instant searchOffersTimed names. Up to
  // that instant a fresh search must give the same offers in the same order, every field equal but
  // `duration` (which counts down); at that instant an offer's end has come, so the answer changes.
  const withoutDuration = (text: string) =>
    (JSON.parse(text) as Array<Record<string, unknown>>).map(({ duration: _duration, ...rest }) => rest);
  const changedAtInstant: string[] = [];
  const cacheable = [...CASES, ...randomCases(60)].filter(([, body]) =>
    cacheableQuery(parseOfferQuery(body)),
  );
  it.each(cacheable)(
    "%s: a fresh search until the answer's change instant differs in duration only",
    async (_name, body) => {
      const query = parseOfferQuery(body);
      const at = await searchOffersTimed(db, query, NOW);
      expect(at.text).toBe(await searchOffersJson(db, query, NOW));
      expect(at.changesAtMs).toBeGreaterThan(NOW.getTime());
      const until = Math.min(at.changesAtMs, NOW.getTime() + 365 * 86_400_000);
      const justBefore = await searchOffersJson(db, query, new Date(Math.ceil(until) - 1));
      expect(withoutDuration(justBefore)).toEqual(withoutDuration(at.text));
      if (Number.isFinite(at.changesAtMs)) {
        // Often (not always: an offer not rentable anyway stays so) the answer changes at that instant.
        const changed = await searchOffersJson(db, query, new Date(Math.ceil(at.changesAtMs)));
        if (JSON.stringify(withoutDuration(changed)) !== JSON.stringify(withoutDuration(at.text)))
          changedAtInstant.push(_name);
      }
    },
  );

  it('checks the change instant on enough cases, and it is often a real change (not vacuous)', () => {
    expect(cacheable.length).toBeGreaterThan(40);
    expect(changedAtInstant.length).toBeGreaterThan(20);
  });

  it('returns results for most cases (the comparison is not vacuous)', () => {
    const nonEmpty = [...CASES, ...randomCases(60)].filter(
      ([, body]) => inMemory(rows, body).length > 0,
    ).length;
    expect(nonEmpty).toBeGreaterThan(50);
  });
});

describe('the instant a search answer changes, with maintenance windows (PGlite)', () => {
  let db: Database;
  const T = 1_780_000_000;
  const offer = (id: number, machine: number): OfferRow => ({
    ...syntheticOfferRows(1, id, T)[0]!,
    id,
    machine_id: machine,
    verified: true,
    rentable: true,
    external: false,
    rented: false,
    end_date: T + 10_000,
    score: 100 - id,
  });

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, CONTEXT_SCHEMAS.marketplace, [
      eventStoreMigration,
      ...marketplaceContext.migrations,
    ]);
    await db.transaction((sql) => insertOfferRows(sql, [offer(1, 1), offer(2, 2)]));
    // Machine 1: maintenance from T+100 to T+200.
    await db.execute(
      `INSERT INTO marketplace.maintenance_windows (window_id, machine_id, start_time, end_time) VALUES (1, 1, $1, $2)`,
      [T + 100, T + 200],
    );
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const ids = (text: string) => (JSON.parse(text) as Array<{ id: number }>).map((o) => o.id);
  const query = parseOfferQuery({ rentable: { eq: true }, order: [['score', 'desc']] });
  const at = (seconds: number) => searchOffersTimed(db, query, new Date(seconds * 1000));

  it('names the start of a window, then its end, then the listing end', async () => {
    const before = await at(T);
    expect(ids(before.text)).toEqual([1, 2]);
    expect(before.changesAtMs).toBe((T + 100) * 1000);
    expect(ids((await at(T + 99.999)).text)).toEqual([1, 2]);
    // In the window machine 1 is not rentable; the answer changes again when the window ends.
    const during = await at(T + 100);
    expect(ids(during.text)).toEqual([2]);
    expect(during.changesAtMs).toBe((T + 200) * 1000);
    const after = await at(T + 200);
    expect(ids(after.text)).toEqual([1, 2]);
    expect(after.changesAtMs).toBe((T + 10_000) * 1000);
    expect(ids((await at(T + 10_000)).text)).toEqual([]);
  });
});
