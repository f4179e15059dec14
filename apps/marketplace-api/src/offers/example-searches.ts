/** What the vastai CLI adds to every offer search unless told otherwise. */
export const CLI_DEFAULTS = {
  verified: { eq: true },
  external: { eq: false },
  rentable: { eq: true },
} as const;

/**
 * Four offer searches as the vastai CLI sends them (docs/client-compat.md): its default query, its defaults
 * alone, a filtered bid search ordered by price and a search ordered by dlperf_usd. The bench times them
 * (bench/offer-search.js, the search case) and offer-search.int-spec checks their answers and plans.
 */
export const EXAMPLE_SEARCHES: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  'CLI default: gpu_name=RTX_4090 num_gpus>=2 (order score-)': {
    ...CLI_DEFAULTS,
    gpu_name: { eq: 'RTX 4090' },
    num_gpus: { gte: '2' },
    order: [['score', 'desc']],
    type: 'on-demand',
    allocated_storage: 5.0,
  },
  'CLI defaults only (order score-)': {
    ...CLI_DEFAULTS,
    order: [['score', 'desc']],
    type: 'on-demand',
    allocated_storage: 5.0,
  },
  'bid, gpu_ram>=24 geolocation in [US,CA] reliability>0.98, order dph+,num_gpus-, limit 5': {
    external: { eq: false },
    rentable: { eq: true },
    gpu_ram: { gte: 24000.0 },
    geolocation: { in: ['US', 'CA'] },
    reliability: { gt: '0.98' },
    order: [
      ['dph_total', 'asc'],
      ['num_gpus', 'desc'],
    ],
    type: 'bid',
    limit: 5,
    allocated_storage: 5.0,
  },
  'dph<1 cuda_vers>=12.2, order dlperf_usd-': {
    ...CLI_DEFAULTS,
    dph: { lt: '1' },
    cuda_vers: { gte: '12.2' },
    order: [['dlperf_per_dphtotal', 'desc']],
    type: 'on-demand',
    allocated_storage: 5.0,
  },
};
