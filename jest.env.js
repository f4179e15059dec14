/**
 * The test suite makes thousands of requests from one address within seconds, which the production rate
 * limits (docs/operations.md, "Rate limits") would refuse: raised here unless a run sets them. The limiter
 * itself is tested with low limits (packages/http-kit/src/rate-limit.spec.ts).
 */
for (const name of ['RIGMARKET_RATE_LIMIT', 'RIGMARKET_RATE_LIMIT_KEY', 'RIGMARKET_RATE_LIMIT_STRICT']) {
  if (process.env[name] === undefined) process.env[name] = '1000000/60';
}
