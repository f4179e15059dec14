import type { MachineEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { refreshOffers } from './offers';

/** The machines read model (GET /machines) and, from it, the machine's offer rows. */
export const machinesProjection = defineProjection<MachineEvent>({
  name: 'machines',
  version: 2,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.machines`, `${SCHEMA}.offers`],
  eventTypes: [
    'MachineRegistered',
    'MachineListed',
    'MachineUnlisted',
    'MinBidChanged',
    'MachineVerificationChanged',
    'MachineHeartbeat',
    'MachineReliabilityChanged',
  ],
  async apply(sql, event) {
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
  },
});
