// Cross-context projection lag over Kafka (distributed mode only): instances created in instance-lifecycle
// (PUT /asks/, one at a time), each measured from the renter's answer (its InstanceCreated is committed
// before the answer leaves) until marketplace's offer search read model (marketplace.offers, projected from
// instance-lifecycle's events over Kafka) shows the machine's free GPUs one fewer. The read model is read
// directly in the database every ~2 ms, so the figure is the path outbox -> relay -> Kafka -> consumer ->
// projection commit, not a search request's own time.
const { stats } = require('../lib');
const { sleep, api, until, listMachine, creditAdmin, usage, dbCounts } = require('../platform-api');
const { startDistributed } = require('../distributed-apps');

/** The machine's free GPUs as search shows them: its largest offer (0 when none is left). */
async function freeGpus(db, machineId) {
  const [row] = await db.query(
    `SELECT COALESCE(max(num_gpus), 0)::int AS free FROM marketplace.offers WHERE machine_id = $1`,
    [machineId],
  );
  return Number(row.free);
}

module.exports = async function lag(mode, { short }) {
  const platform = await startDistributed('lag');
  const { base, db } = platform;
  try {
    await creditAdmin(base);
    // 8 GPUs a machine, one GPU a rent.
    const samples = short ? 3 : 60;
    const machines = Math.ceil(samples / 8);
    const machineIds = [];
    for (let n = 0; n < machines; n += 1) machineIds.push(await listMachine(base, n));
    // Both contexts know every machine as listed before the first rent.
    for (const machineId of machineIds) {
      await until('the machine offered', async () => (await freeGpus(db, machineId)) === 8, 60_000);
      await until(
        'the machine listed in instance-lifecycle',
        async () =>
          (
            await db.query(
              `SELECT 1 FROM instance_lifecycle.market_machines WHERE machine_id = $1 AND listed AND ask IS NOT NULL`,
              [machineId],
            )
          ).length > 0,
        60_000,
      );
    }
    // What the consumers' side costs: marketplace-api's CPU and database work over the rents (its consumers of
    // instance-lifecycle's events, all of them; the bench's reads are not counted).
    const marketplace = { base: platform.appBase(1), pid: platform.pids['marketplace-api'] };
    const cpu0 = usage(marketplace.pid).cpuS;
    const counts0 = await dbCounts([marketplace.base]);
    const lags = [];
    const deadline = performance.now() + (short ? 30_000 : 120_000);
    let timedOut = 0;
    for (let i = 0; i < samples && performance.now() < deadline; i += 1) {
      const machineId = machineIds[Math.floor(i / 8)];
      const before = await freeGpus(db, machineId);
      const r = await api(base, 'PUT', `/api/v0/asks/${machineId * 1000 + 1}/`, {
        image: 'busybox',
        disk: 10,
      });
      const answered = performance.now();
      if (r.status >= 300 || !r.body.new_contract)
        throw new Error(`bench lag: a rent refused: ${r.status} ${JSON.stringify(r.body)}`);
      for (;;) {
        if ((await freeGpus(db, machineId)) < before) {
          lags.push(performance.now() - answered);
          break;
        }
        if (performance.now() - answered > 10_000) {
          timedOut += 1;
          break;
        }
        await sleep(2);
      }
      // Not in step with the consumer's fetches or the relay's polls.
      await sleep(20 + Math.random() * 80);
    }
    // The last rent's later events (its instance starting) are counted too.
    await sleep(1_000);
    const counts1 = await dbCounts([marketplace.base]);
    const cpuMs = (usage(marketplace.pid).cpuS - cpu0) * 1000;
    const s = stats(lags);
    const perRent = (x) => (s.n > 0 ? (x / s.n).toFixed(1) : '-');
    return [
      {
        case: `projection lag over Kafka: instance created (instance-lifecycle) -> search shows fewer free GPUs (marketplace), ${s.n} rents one at a time`,
        mode,
        p50: s.p50,
        p99: s.p99,
        ceiling: `max ${s.n > 0 ? Math.round(Math.max(...lags)) : '-'} ms; ${timedOut} not shown within 10 s; marketplace-api per rent: ${perRent(cpuMs)} ms CPU, ${perRent(counts1.statements - counts0.statements)} statements, ${perRent(counts1.transactions - counts0.transactions)} transactions`,
        goal: 'p99 <= 100 ms',
      },
    ];
  } finally {
    await platform.stop();
  }
};
