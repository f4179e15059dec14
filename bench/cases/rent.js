// Renting (PUT /asks/) with 16 concurrent renters on distinct offers, and what each rent costs the servers:
// creates/s (answered, and with every event delivered to the other contexts), CPU seconds of the server
// processes per rent and database statements per rent (their /metrics: rigmarket_db_statements_total), the
// background deliveries to the other contexts included. Embedded: `node apps/platform/dist/main.js` (PGlite);
// distributed: the four apps on PostgreSQL and Kafka (bench/distributed-apps.js; the broker's and
// PostgreSQL's own CPU are not counted).
// Beside /healthz, two ceilings of the rent's own request path, measured on the same server in the same run:
// the renter's authenticated GET /users/current/ (key, rate limit, one read), and the very PUT /asks/ refused
// at its first read (an offer that does not exist: key, rate limit, body validation, the lookup, nothing
// written). A create does all of that and then decides and writes, so it cannot be answered faster than
// the refused one.
const os = require('node:os');
const { stats, throughput } = require('../lib');
const {
  startPlatform,
  untilIdle,
  idleRate,
  rentOffer,
  firstRent,
  doubleAllocations,
  listMachine,
  creditAdmin,
  dbCounts,
  api,
} = require('../platform-api');

// Offers of machines no bench lists (machine n's offer is n * 1000 + 1): rented, they answer 404.
const UNKNOWN_MACHINE = 900_000;

/** Awaits a request and checks its status: a ceiling that measured refusals of another kind means nothing. */
async function expectStatus(request, status, what) {
  const r = await request;
  if (r.status !== status)
    throw new Error(`bench rent: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
}

/** The servers' CPU (cores) and statements and transactions per second while nobody calls them. */
async function idleRates(platform, ms) {
  const n0 = await dbCounts(platform.metricsBases);
  const t0 = performance.now();
  const cpu = await idleRate(platform.cpuS, ms);
  const s = (performance.now() - t0) / 1000;
  const n1 = await dbCounts(platform.metricsBases);
  return {
    cpu,
    statements: (n1.statements - n0.statements) / s,
    transactions: (n1.transactions - n0.transactions) / s,
  };
}

module.exports = async function rent(mode, { short }) {
  const platform = await startPlatform(mode, 'rent');
  const { base } = platform;
  try {
    await creditAdmin(base);
    const renters = short ? 2 : 16;
    const rounds = short ? 1 : 6;
    const machineIds = [];
    for (let n = 0; n < renters; n += 1) machineIds.push(await listMachine(base, n));
    // Warm-up, not timed: one rent per machine, retried until instance-lifecycle shows it listed.
    const created = [];
    for (const machineId of machineIds) {
      const r = await firstRent(base, machineId);
      created.push({ machineId, id: r.body.new_contract });
    }
    await untilIdle(platform.cpuS, { idleCores: mode === 'embedded' ? 0 : 0.3 });
    const idle = await idleRates(platform, short ? 1000 : 5000);
    const health = () => fetch(`${base}/healthz`).then((r) => r.text());
    const ceilingRun = { concurrency: 16, durationMs: short ? 300 : 3000 };
    const healthRate = await throughput(health, ceilingRun);
    const currentUser = () =>
      expectStatus(api(base, 'GET', '/api/v0/users/current/'), 200, 'GET /users/current/');
    const userRate = await throughput(currentUser, ceilingRun);
    const refusedRent = (i) =>
      expectStatus(rentOffer(base, UNKNOWN_MACHINE + (i % renters)), 404, 'a rent of an unknown offer');
    const refusedRate = await throughput(refusedRent, ceilingRun);
    const load = os.loadavg()[0];
    const counts0 = await dbCounts(platform.metricsBases);
    const cpu0 = platform.cpuS();
    const times = [];
    let refused = 0;
    let firstRefusal;
    const t0 = performance.now();
    for (let round = 0; round < rounds; round += 1) {
      await Promise.all(
        machineIds.map(async (machineId) => {
          const s = performance.now();
          const r = await rentOffer(base, machineId);
          times.push(performance.now() - s);
          if (r.status < 300 && r.body.new_contract) created.push({ machineId, id: r.body.new_contract });
          else {
            refused += 1;
            firstRefusal ??= `${r.status} ${JSON.stringify(r.body)}`;
          }
        }),
      );
    }
    const rentS = (performance.now() - t0) / 1000;
    const cpuAnswered = platform.cpuS() - cpu0;
    // Until every rent's events reached the other contexts: the work a rent still causes.
    const deliveredS = rentS + (await untilIdle(platform.cpuS, { idleCores: idle.cpu })) - 0.5;
    const cpuAll = platform.cpuS() - cpu0;
    const counts1 = await dbCounts(platform.metricsBases);
    if (firstRefusal) process.stderr.write(`bench rent: a rent refused: ${firstRefusal}\n`);
    const timed = created.length - machineIds.length;
    // Every create must hold GPUs of its own: no machine holds more than its 8 GPUs.
    const over = doubleAllocations(created);
    const per = (v) => (timed > 0 ? v / timed : NaN);
    const s = stats(times);
    return [
      {
        case: `rent: ${renters} concurrent renters on distinct offers, ${rounds} rounds (cost per rent)`,
        mode,
        p50: s.p50,
        p99: s.p99,
        perSec: timed / rentS,
        ceiling:
          `/healthz ${Math.round(healthRate.perSec)}/s (16 concurrent); the rent's request path with nothing written: ` +
          `GET /users/current/ ${Math.round(userRate.perSec)}/s, the same PUT refused at its first read (unknown offer, 404) ` +
          `${Math.round(refusedRate.perSec)}/s (creates ${(timed / rentS / refusedRate.perSec).toFixed(2)} of it); ${timed} created, ${refused} refused, ${over} double allocations; ` +
          `${(timed / deliveredS).toFixed(1)}/s with their events delivered; per rent (idle work over the same time included): ${(1000 * per(cpuAnswered)).toFixed(1)} ms server CPU until answered, ` +
          `${(1000 * per(cpuAll)).toFixed(1)} ms until delivered, ${per(counts1.statements - counts0.statements).toFixed(1)} statements, ` +
          `${per(counts1.transactions - counts0.transactions).toFixed(1)} transactions (idle: ${(100 * idle.cpu).toFixed(1)}% of a core, ${idle.statements.toFixed(0)} statements/s); load ${load.toFixed(1)}`,
        ratio: timed / rentS / healthRate.perSec,
        goal: '>= 300 creates/s, 0 double allocations',
      },
    ];
  } finally {
    await platform.stop();
  }
};
