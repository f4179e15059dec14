// Heartbeats of a listed 8-GPU machine as POST /machines/:id/heartbeat runs them (RecordHeartbeatHandler: a
// liveness row, and a machine event only when the reliability moves): ms per heartbeat once it is steady.
const { ContextRuntime, ManualClock } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { marketplaceContext } = require('@rigmarket/marketplace-api');
const { machineDecider } = require('../../apps/marketplace-api/dist/machines/machine.decider');
const {
  RecordHeartbeatCommand,
  RecordHeartbeatHandler,
} = require('../../apps/marketplace-api/dist/machines/machines.handlers');
const { stats, timeEach, freshDatabase } = require('../lib');

const metadata = { correlationId: 'bench', causationId: 'bench' };
const hardware = {
  hostname: 'bench',
  gpuName: 'RTX 4090',
  numGpus: 8,
  gpuRamMb: 24564,
  cudaMaxGood: 12.4,
  driverVersion: '550.54.15',
  computeCap: 890,
  cpuName: 'EPYC',
  cpuCores: 32,
  cpuGhz: 2.8,
  cpuRamMb: 257000,
  diskSpaceGb: 2000,
  diskBwMbps: 3000,
  diskName: 'NVMe',
  inetUpMbps: 900,
  inetDownMbps: 950,
  directPortCount: 200,
  publicIpaddr: '198.51.100.1',
  geolocation: 'US',
  pcieGen: 4,
  pcieBwGbps: 24.5,
  hostingType: 0,
  vmsEnabled: false,
};
const ask = {
  priceGpu: 0.4,
  priceDisk: 0.15,
  priceInetUp: 0.01,
  priceInetDown: 0.01,
  minBid: 0.2,
  minChunk: 1,
  endDate: null,
  creditDiscountMax: 0.4,
  duration: null,
  volSize: null,
  volPrice: null,
};

module.exports = async function heartbeat(mode, { short }) {
  const { db, drop } = await freshDatabase(mode);
  const transport = new InProcessTransport();
  const clock = new ManualClock('2026-05-01T12:00:00.000Z');
  const runtime = await ContextRuntime.start(marketplaceContext, { db, transport, clock });
  try {
    const run = (command) =>
      runtime.runner.handle(
        'machine-7',
        machineDecider,
        (state, now) => machineDecider.decide({ ...command, at: now.toISOString() }, state),
        metadata,
      );
    await run({ type: 'RegisterMachine', machineId: 7, ownerId: 1, hardware, dlperf: 100, tflops: 80 });
    await run({ type: 'ListMachine', requesterId: 1, ask });
    const handler = new RecordHeartbeatHandler(runtime);
    const beat = () => {
      clock.advance(60_000);
      return handler.execute(new RecordHeartbeatCommand(1, 7, metadata));
    };
    for (let i = 0; i < 5; i += 1) await beat();
    const s = stats(await timeEach(short ? 20 : 300, beat));
    return [
      {
        case: 'heartbeat of a listed 8-GPU machine (liveness row; an event only when the reliability moves)',
        mode,
        p50: s.p50,
        p99: s.p99,
        perSec: 1000 / s.mean,
      },
    ];
  } finally {
    await runtime.stop();
    await transport.close();
    await db.close();
    await drop();
  }
};
