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
  async apply(sql, event) {
    await refreshOffers(sql, await applyWrites(sql, [event]));
  },
  // A delivery of many rents or ends: each run of one kind of instance event is one statement, and the offers
  // of every machine the batch touched are refreshed once at its end (offers follow only the machines and
  // allocations tables, so refreshing them once after the last change leaves the rows refreshing after each
  // change left).
  async applyBatch(sql, events) {
    await refreshOffers(sql, await applyWrites(sql, events));
  },
});

/**
 * Applies the events' changes to machines and instance_allocations (consecutive instance events of one type
 * in one statement) and gives the machines whose offers may have changed.
 */
async function applyWrites(
  sql: Sql,
  events: readonly EnvelopeOf<MachineEvent | AllocationEvent>[],
): Promise<Set<number>> {
  const touched = new Set<number>();
  const acting = events.filter(actsOn);
  for (let i = 0; i < acting.length;) {
    const event = acting[i]!;
    if (!isAllocationEvent(event)) {
      const machineId = await applyMachine(sql, event);
      if (machineId !== undefined) touched.add(machineId);
      i += 1;
      continue;
    }
    let end = i + 1;
    while (end < acting.length && acting[end]!.type === event.type) end += 1;
    const run = acting.slice(i, end) as EnvelopeOf<AllocationEvent>[];
    for (const machineId of await applyAllocations(sql, run)) touched.add(machineId);
    i = end;
  }
  return touched;
}

/** False for the instance events that change nothing here: a host's default job, an intent other than running. */
function actsOn(event: EnvelopeOf<MachineEvent | AllocationEvent>): boolean {
  // The host's default job yields its GPUs to any rental: offers show them as free.
  if (event.type === 'InstanceCreated') return !event.data.defaultJob;
  if (event.type === 'InstanceIntentChanged') return event.data.intendedStatus === 'running';
  return true;
}

/** Applies a machine event; gives its machine when its offers may have changed. */
async function applyMachine(sql: Sql, event: EnvelopeOf<MachineEvent>): Promise<number | undefined> {
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
      // Its offers go with it (refreshOffers finds no machine); its allocations end with their instances.
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
      if (before && Number(before.reliability) === event.data.reliability) return undefined;
      break;
    }
    case 'MachineReliabilityChanged':
      await sql.execute(`UPDATE ${t} SET reliability = $2 WHERE machine_id = $1`, [
        event.data.machineId,
        event.data.reliability,
      ]);
      break;
  }
  return event.data.machineId;
}

/**
 * Applies a run of instance events of one type (their changes commute: one statement for all) and gives the
 * machines whose free GPUs may have changed.
 */
async function applyAllocations(sql: Sql, run: readonly EnvelopeOf<AllocationEvent>[]): Promise<number[]> {
  const t = `${SCHEMA}.instance_allocations`;
  const instanceIds = run.map((e) => e.data.instanceId);
  const machineIds = run.flatMap((e) => ('machineId' in e.data ? [e.data.machineId] : []));
  switch (run[0]?.type) {
    case 'InstanceCreated':
      await insertUnnested(
        sql,
        t,
        [
          ['instance_id', 'int'],
          ['machine_id', 'int'],
          ['num_gpus', 'int'],
          ['renter_id', 'int'],
        ],
        (run as EnvelopeOf<InstanceCreated>[]).map((e) => [
          e.data.instanceId,
          e.data.machineId,
          e.data.numGpus,
          e.data.renter,
        ]),
        'ON CONFLICT (instance_id) DO NOTHING',
      );
      return machineIds;
    case 'InstanceDestroyed':
      await sql.execute(`DELETE FROM ${t} WHERE instance_id = ANY($1::int[])`, [instanceIds]);
      return machineIds;
    case 'InstanceOutbid':
      // an outbid instance holds no GPUs until it is started again
      await sql.execute(`UPDATE ${t} SET held = FALSE WHERE instance_id = ANY($1::int[])`, [instanceIds]);
      return machineIds;
    case 'InstanceIntentChanged': {
      // started again (the runs hold only intents of running): its machine is the allocation's
      const rows = await sql.query<{ machine_id: number }>(
        `UPDATE ${t} SET held = TRUE WHERE instance_id = ANY($1::int[]) AND NOT held RETURNING machine_id`,
        [instanceIds],
      );
      return rows.map((row) => Number(row.machine_id));
    }
    case undefined:
      return [];
  }
}
