import type {
  InstanceCreated,
  InstanceDestroyed,
  InstanceIntentChanged,
  InstanceOutbid,
  MachineEvent,
} from '@rigmarket/contracts';
import { type EnvelopeOf, type Sql, defineProjection, insertUnnested } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { refreshOffers } from './offers';

/** What instance-lifecycle's instances hold of a machine's GPUs. */
type AllocationEvent = InstanceCreated | InstanceDestroyed | InstanceOutbid | InstanceIntentChanged;
const ALLOCATION_EVENTS: ReadonlySet<string> = new Set<AllocationEvent['type']>([
  'InstanceCreated',
  'InstanceDestroyed',
  'InstanceOutbid',
  'InstanceIntentChanged',
]);
const isAllocationEvent = (
  event: EnvelopeOf<MachineEvent | AllocationEvent>,
): event is EnvelopeOf<AllocationEvent> => ALLOCATION_EVENTS.has(event.type);

/**
 * The machines read model (GET /machines), the GPUs instances hold on them (instance_allocations, from
 * instance-lifecycle's instance events) and, from both, each machine's offer rows: one projection owns the
 * three tables, so no projection reads another's. Inline for the machine streams (marketplace's own),
 * subscribed for the instance streams.
 */
export const machinesProjection = defineProjection<MachineEvent | AllocationEvent>({
  name: 'machines',
  version: 4,
  sources: [
    { context: 'marketplace', streamType: 'machine' },
    { context: 'instance', streamType: 'instance' },
  ],
  tables: [`${SCHEMA}.machines`, `${SCHEMA}.offers`, `${SCHEMA}.instance_allocations`],
  eventTypes: [
    'InstanceCreated',
    'InstanceDestroyed',
    'InstanceOutbid',
    'InstanceIntentChanged',
    'MachineRegistered',
    'MachineListed',
    'MachineUnlisted',
    'MachineDeleted',
    'MinBidChanged',
    'MachineVerificationChanged',
    'MachineHeartbeat',
    'MachineReliabilityChanged',
  ],
  apply: applyEvent,
  // A delivery of many rents: their allocations in one INSERT, then each machine's offers once.
  async applyBatch(sql, events) {
    let run: EnvelopeOf<InstanceCreated>[] = [];
    const flush = async () => {
      await insertUnnested(
        sql,
        `${SCHEMA}.instance_allocations`,
        [
          ['instance_id', 'int'],
          ['machine_id', 'int'],
          ['num_gpus', 'int'],
          ['renter_id', 'int'],
        ],
        run.map((e) => [e.data.instanceId, e.data.machineId, e.data.numGpus, e.data.renter]),
        'ON CONFLICT (instance_id) DO NOTHING',
      );
      for (const machineId of new Set(run.map((e) => e.data.machineId))) await refreshOffers(sql, machineId);
      run = [];
    };
    for (const event of events) {
      if (event.type === 'InstanceCreated') {
        // The host's default job yields its GPUs to any rental: offers show them as free.
        if (!event.data.defaultJob) run.push(event);
        continue;
      }
      await flush();
      await applyEvent(sql, event);
    }
    await flush();
  },
});

function applyEvent(sql: Sql, event: EnvelopeOf<MachineEvent | AllocationEvent>): Promise<void> {
  return isAllocationEvent(event) ? applyAllocation(sql, event) : applyMachine(sql, event);
}

async function applyMachine(sql: Sql, event: EnvelopeOf<MachineEvent>): Promise<void> {
  const t = `${SCHEMA}.machines`;
  switch (event.type) {
    case 'MachineRegistered': {
      const hw = event.data.hardware;
      await sql.execute(
        `INSERT INTO ${t} (machine_id, owner_id, gpu_name, num_gpus, listed, details, hardware, dlperf, tflops, registered_at)
         VALUES ($1, $2, $3, $4, FALSE, '{}', $5, $6, $7, $8)`,
        [
          event.data.machineId,
          event.data.ownerId,
          hw.gpuName,
          hw.numGpus,
          JSON.stringify(hw),
          event.data.dlperf,
          event.data.tflops,
          event.data.registeredAt,
        ],
      );
      break;
    }
    case 'MachineListed':
      await sql.execute(`UPDATE ${t} SET listed = TRUE, ask = $2, listed_at = $3 WHERE machine_id = $1`, [
        event.data.machineId,
        JSON.stringify(event.data.ask),
        event.data.listedAt,
      ]);
      break;
    case 'MachineUnlisted':
      await sql.execute(`UPDATE ${t} SET listed = FALSE WHERE machine_id = $1`, [event.data.machineId]);
      break;
    case 'MachineDeleted':
      // Its offers go with it (refreshOffers below finds no machine); its allocations end with their instances.
      await sql.execute(`DELETE FROM ${t} WHERE machine_id = $1`, [event.data.machineId]);
      break;
    case 'MinBidChanged':
      await sql.execute(
        `UPDATE ${t} SET ask = jsonb_set(ask, '{minBid}', to_jsonb($2::float8)) WHERE machine_id = $1 AND ask IS NOT NULL`,
        [event.data.machineId, event.data.minBid],
      );
      break;
    case 'MachineVerificationChanged':
      await sql.execute(`UPDATE ${t} SET verification = $2 WHERE machine_id = $1`, [
        event.data.machineId,
        event.data.verification,
      ]);
      break;
    case 'MachineHeartbeat': {
      // A heartbeat changes the offers only when it moves the reliability (offers show it and their score
      // uses it): a steady machine's heartbeats no longer rewrite its offer rows every minute.
      const [before] = await sql.query<{ reliability: number }>(
        `SELECT reliability FROM ${t} WHERE machine_id = $1 FOR UPDATE`,
        [event.data.machineId],
      );
      await sql.execute(`UPDATE ${t} SET reliability = $2, last_heartbeat_at = $3 WHERE machine_id = $1`, [
        event.data.machineId,
        event.data.reliability,
        event.data.at,
      ]);
      if (before && Number(before.reliability) === event.data.reliability) return;
      break;
    }
    case 'MachineReliabilityChanged':
      await sql.execute(`UPDATE ${t} SET reliability = $2 WHERE machine_id = $1`, [
        event.data.machineId,
        event.data.reliability,
      ]);
      break;
  }
  await refreshOffers(sql, event.data.machineId);
}

/** An instance took, gave back or took again its GPUs: its allocation row, and the machine's offers. */
async function applyAllocation(sql: Sql, event: EnvelopeOf<AllocationEvent>): Promise<void> {
  let machineId: number;
  switch (event.type) {
    case 'InstanceCreated':
      // The host's default job yields its GPUs to any rental: offers show them as free.
      if (event.data.defaultJob) return;
      machineId = event.data.machineId;
      await sql.execute(
        `INSERT INTO ${SCHEMA}.instance_allocations (instance_id, machine_id, num_gpus, renter_id) VALUES ($1, $2, $3, $4) ON CONFLICT (instance_id) DO NOTHING`,
        [event.data.instanceId, machineId, event.data.numGpus, event.data.renter],
      );
      break;
    case 'InstanceDestroyed':
      machineId = event.data.machineId;
      await sql.execute(`DELETE FROM ${SCHEMA}.instance_allocations WHERE instance_id = $1`, [
        event.data.instanceId,
      ]);
      break;
    case 'InstanceOutbid':
      // an outbid instance holds no GPUs until it is started again
      machineId = event.data.machineId;
      await sql.execute(`UPDATE ${SCHEMA}.instance_allocations SET held = FALSE WHERE instance_id = $1`, [
        event.data.instanceId,
      ]);
      break;
    case 'InstanceIntentChanged': {
      if (event.data.intendedStatus !== 'running') return;
      const rows = await sql.query<{ machine_id: number }>(
        `UPDATE ${SCHEMA}.instance_allocations SET held = TRUE WHERE instance_id = $1 AND NOT held RETURNING machine_id`,
        [event.data.instanceId],
      );
      if (!rows[0]) return;
      machineId = Number(rows[0].machine_id);
      break;
    }
  }
  await refreshOffers(sql, machineId);
}
