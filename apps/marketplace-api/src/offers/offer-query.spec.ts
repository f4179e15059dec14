import { chunkSizes, offerId } from './offer-rows';
import { DEFAULT_LIMIT, offerSearchSql, parseOfferQuery } from './offer-query';

describe('offer query parsing', () => {
  it('parses what the CLI sends, coercing numeric strings', () => {
    const q = parseOfferQuery({
      verified: { eq: true },
      external: { eq: false },
      rentable: { eq: true },
      gpu_name: { eq: 'RTX_4090' },
      num_gpus: { gte: '2' },
      order: [['score', 'desc']],
      type: 'on-demand',
      allocated_storage: 5.0,
    });
    expect(q.filters).toEqual([
      { field: 'verified', op: 'eq', value: true },
      { field: 'external', op: 'eq', value: false },
      { field: 'rentable', op: 'eq', value: true },
      { field: 'gpu_name', op: 'eq', value: 'RTX 4090' },
      { field: 'num_gpus', op: 'gte', value: 2 },
    ]);
    expect(q).toMatchObject({
      type: 'on-demand',
      limit: DEFAULT_LIMIT,
      allocatedStorage: 5,
      order: [{ field: 'score', direction: 'desc' }],
    });
  });

  it('applies aliases in filters and order, and several operators on one field', () => {
    const q = parseOfferQuery({
      dph: { lt: '1.5' },
      cuda_vers: { gte: 12 },
      disk_space: { gte: 1, gt: '50' },
      order: [['dlperf_usd', 'desc']],
      type: 'bid',
      limit: '5',
    });
    expect(q.filters).toEqual([
      { field: 'dph_total', op: 'lt', value: 1.5 },
      { field: 'cuda_max_good', op: 'gte', value: 12 },
      { field: 'disk_space', op: 'gte', value: 1 },
      { field: 'disk_space', op: 'gt', value: 50 },
    ]);
    expect(q).toMatchObject({
      type: 'bid',
      limit: 5,
      order: [{ field: 'dlperf_per_dphtotal', direction: 'desc' }],
    });
  });

  it('reads the driver version in either form, lists for in/notin, and "any" as no filter', () => {
    const q = parseOfferQuery({
      driver_version: { gte: '535.86.05' },
      geolocation: { in: ['US', 'CA'] },
      verified: 'any',
      reliability: { gt: 'any' },
    });
    expect(q.filters).toEqual([
      { field: 'driver_version', op: 'gte', value: 535086005 },
      { field: 'geolocation', op: 'in', value: ['US', 'CA'] },
    ]);
  });

  it('accepts ondemand and reserved; refuses unknown fields, operators, types and bad numbers', () => {
    expect(parseOfferQuery({ type: 'ondemand' }).type).toBe('on-demand');
    expect(parseOfferQuery({ type: 'reserved' }).type).toBe('reserved');
    expect(() => parseOfferQuery({ gpu_nam: { eq: 'x' } })).toThrow('Unknown filter field: gpu_nam');
    expect(() => parseOfferQuery({ num_gpus: { like: 1 } })).toThrow('Unknown operator like');
    expect(() => parseOfferQuery({ type: 'spot' })).toThrow('Invalid type');
    expect(() => parseOfferQuery({ num_gpus: { gte: 'two' } })).toThrow('Invalid value "two" for num_gpus');
    expect(() => parseOfferQuery({ order: [['nope', 'asc']] })).toThrow('Unknown order field: nope');
  });

  it('reads the q object of PUT /search/asks/', () => {
    expect(parseOfferQuery({ select_cols: ['*'], q: { num_gpus: { eq: '1' }, limit: 3 } })).toMatchObject({
      filters: [{ field: 'num_gpus', op: 'eq', value: 1 }],
      limit: 3,
    });
  });
});

describe('offer SQL', () => {
  it('puts every value in a parameter, never in the text', () => {
    const q = parseOfferQuery({
      gpu_name: { eq: "RTX'; DROP TABLE x; --" },
      geolocation: { notin: ['US'] },
      num_gpus: { gte: '2' },
      limit: 7,
    });
    const { sql, params } = offerSearchSql(q, 'marketplace', 1000);
    expect(sql).not.toContain('DROP');
    expect(params).toEqual([5, 1000, "RTX'; DROP TABLE x; --", ['US'], 2, 7]);
  });

  it('clips rentable, end_date and duration at the next maintenance window only when some machine has one', () => {
    const q = parseOfferQuery({ rentable: { eq: true }, duration: { gte: '3600' } });
    const plain = offerSearchSql(q, 'marketplace', 1000);
    expect(plain.sql).not.toContain('array_position');
    expect(offerSearchSql(q, 'marketplace', 1000, { machineIds: [], starts: [] })).toEqual(plain);
    const clipped = offerSearchSql(q, 'marketplace', 1000, { machineIds: [42, 7], starts: [5000, 9000] });
    expect(clipped.sql).toContain('LEAST(end_date, ($4::float8[])[array_position($3::int[], machine_id)])');
    expect(clipped.params.slice(0, 4)).toEqual([5, 1000, [42, 7], [5000, 9000]]);
  });
});

describe('offer chunks', () => {
  it('offers min_chunk, 2x, 4x... up to the free count, and the whole free count', () => {
    expect(chunkSizes(1, 8)).toEqual([1, 2, 4, 8]);
    expect(chunkSizes(2, 8)).toEqual([2, 4, 8]);
    expect(chunkSizes(1, 6)).toEqual([1, 2, 4, 6]);
    expect(chunkSizes(4, 2)).toEqual([]);
    expect(offerId(42, 2)).toBe(42002);
  });
});
