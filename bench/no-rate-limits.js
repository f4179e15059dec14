/**
 * Benchmarks measure throughput from one address: the production rate limits (docs/operations.md,
 * "Rate limits") would refuse most of it. Raised here, for this process and the servers it spawns,
 * unless the run sets them.
 */
for (const name of ['RIGMARKET_RATE_LIMIT', 'RIGMARKET_RATE_LIMIT_KEY', 'RIGMARKET_RATE_LIMIT_STRICT']) {
  if (process.env[name] === undefined) process.env[name] = '1000000/60';
}
