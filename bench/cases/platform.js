// The embedded platform as `npm start` runs it (node apps/platform/dist/main.js, PGlite on disk in a fresh
// folder), measured from outside: start to a served request, RSS and CPU while idle, renting (PUT /asks/) with
// 16 concurrent renters on distinct offers, polling GET /instances/ with 100 instances, RSS under that load.
const { stats, timeEach, throughput, throughputRow } = require('../lib');
const {
  sleep,
  usage,
  startEmbeddedPlatform,
  api,
  untilIdle,
  rentOffer,
  doubleAllocations,
  listMachine,
  creditAdmin,
  KEY,
} = require('../platform-api');

module.exports = async function platform(mode, { short }) {
  const { base, child, startMs, stop } = await startEmbeddedPlatform({ timeoutMs: 60_000 });
  const rows = [];
  try {
    rows.push({
      case: 'embedded start (node on a built tree) to a served /healthz',
      mode,
      p50: startMs,
      goal: '<= 5,000 ms',
    });
    // Idle: no request at all for a while.
    await sleep(short ? 500 : 3000);
    const idleFor = short ? 1000 : 10_000;
    const a = usage(child.pid);
    await sleep(idleFor);
    const b = usage(child.pid);
    rows.push({
      case: `CPU over the ${idleFor / 1000} s from ${(short ? 500 : 3000) / 1000} s after start, no request (pollers still backing off; the steady idle state: the boot case)`,
      mode,
      ceiling: `${((100 * (b.cpuS - a.cpuS)) / (idleFor / 1000)).toFixed(2)}% of a core; RSS ${b.rssMb.toFixed(0)} MB`,
      goal: 'RSS <= 200 MB',
    });
    // Hosts and credit (the admin rents from its own machines: the renters are concurrent requests).
    const machines = short ? 2 : 16;
    const rounds = short ? 1 : 6;
    await creditAdmin(base);
    const machineIds = [];
    for (let n = 0; n < machines; n += 1) machineIds.push(await listMachine(base, n));
    const health = () => fetch(`${base}/healthz`).then((r) => r.text());
    const healthRate = await throughput(health, { concurrency: 16, durationMs: short ? 300 : 3000 });
    // Wait until instance-lifecycle has every machine (the first accept after a machine change may be 404).
    const rent = (machineId) => rentOffer(base, machineId);
    const times = [];
    const created = [];
    let refused = 0;
    const t0 = performance.now();
    for (let round = 0; round < rounds; round += 1) {
      await Promise.all(
        machineIds.map(async (machineId) => {
          for (let attempt = 0; ; attempt += 1) {
            const s = performance.now();
            const r = await rent(machineId);
            if (r.status === 404 && attempt < 100) {
              await sleep(50);
              continue;
            }
            times.push(performance.now() - s);
            if (r.status < 300 && r.body.new_contract) created.push({ machineId, id: r.body.new_contract });
            else {
              refused += 1;
              if (refused === 1)
                process.stderr.write(
                  `bench platform: a rent refused: ${r.status} ${JSON.stringify(r.body)}\n`,
                );
            }
            return;
          }
        }),
      );
    }
    const rentS = (performance.now() - t0) / 1000;
    // Until every rent's events reached the other contexts (offers, billing): the work a rent still causes.
    const cpuS = () => usage(child.pid).cpuS;
    const deliveredS = rentS + (await untilIdle(cpuS)) - 0.5;
    // Every create must hold GPUs of its own: no machine holds more than its 8 GPUs.
    const over = doubleAllocations(created);
    rows.push(
      throughputRow(
        {
          case: `rent: ${machines} concurrent renters on distinct offers, ${rounds} rounds`,
          mode,
          goal: '>= 300 creates/s, 0 double allocations',
        },
        { ...stats(times), perSec: created.length / rentS },
        healthRate,
        `${created.length} created, ${refused} refused, ${over} double allocations; with their events delivered to the other contexts ${(created.length / deliveredS).toFixed(1)}/s`,
      ),
    );
    // Fill up to 100 instances, then poll.
    const target = short ? 4 : 100;
    for (let i = 0; created.length < target && i < 200; i += 1) {
      const r = await rent(machineIds[i % machineIds.length]);
      if (r.status < 300 && r.body.new_contract) created.push({ id: r.body.new_contract });
    }
    // Timed polls read the whole answer as /healthz's do, without parsing it: the ratio compares the
    // server's work, not the bench client's JSON.parse of ~100 KB (which shares the machine's cores).
    const poll = async () => {
      const r = await fetch(`${base}/api/v0/instances/`, { headers: { Authorization: `Bearer ${KEY}` } });
      const text = await r.text();
      if (r.status !== 200 || !text.startsWith('{"success":true'))
        throw new Error(`GET /instances/: ${r.status}`);
      return text.length;
    };
    const listed = (await api(base, 'GET', '/api/v0/instances/')).body.instances.length;
    await untilIdle(cpuS);
    const pollStats = stats(await timeEach(short ? 5 : 100, poll));
    const pollRate = await throughput(poll, { concurrency: 8, durationMs: short ? 300 : 3000 });
    const healthRate8 = await throughput(health, { concurrency: 8, durationMs: short ? 300 : 3000 });
    rows.push(
      throughputRow(
        { case: `poll GET /instances/ with ${listed} instances`, mode, goal: '>= 0.6' },
        { ...pollRate, p50: pollStats.p50, p99: pollStats.p99 },
        healthRate8,
      ),
    );
    const loaded = usage(child.pid);
    rows.push({
      case: 'RSS under load (after renting and polling)',
      mode,
      ceiling: `${loaded.rssMb.toFixed(0)} MB`,
      goal: '<= 200 MB',
    });
    return rows;
  } finally {
    await stop();
  }
};
