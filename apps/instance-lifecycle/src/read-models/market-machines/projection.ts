import type { MachineEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** The machines instance-lifecycle may rent out, with their ask: marketplace's machine events. */
export const marketMachinesProjection = defineProjection<MachineEvent>({
  name: 'market_machines',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.market_machines`],
  eventTypes: [
    'MachineRegistered',
    'MachineListed',
    'MachineUnlisted',
    'MachineDeleted',
    'MinBidChanged',
    'MachineVerificationChanged',
  ],
  async apply(sql, event) {
    const table = `${SCHEMA}.market_machines`;
    switch (event.type) {
      case 'MachineRegistered': {
        const hw = event.data.hardware;
        await sql.execute(
          `INSERT INTO ${table} (machine_id, owner_id, gpu_name, num_gpus, gpu_ram, public_ipaddr, vms_enabled, geolocation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (machine_id) DO UPDATE SET gpu_name = EXCLUDED.gpu_name, num_gpus = EXCLUDED.num_gpus, gpu_ram = EXCLUDED.gpu_ram,
             public_ipaddr = EXCLUDED.public_ipaddr, vms_enabled = EXCLUDED.vms_enabled, geolocation = EXCLUDED.geolocation`,
          [
            event.data.machineId,
            event.data.ownerId,
            hw.gpuName,
            hw.numGpus,
            hw.gpuRamMb,
            hw.publicIpaddr,
            hw.vmsEnabled ?? false,
            hw.geolocation,
          ],
        );
        return;
      }
      case 'MachineListed':
        await sql.execute(`UPDATE ${table} SET listed = TRUE, ask = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          JSON.stringify(event.data.ask),
        ]);
        return;
      case 'MachineUnlisted':
        await sql.execute(`UPDATE ${table} SET listed = FALSE WHERE machine_id = $1`, [event.data.machineId]);
        return;
      case 'MachineDeleted':
        // A deleted machine rents nothing more: its offers answer 404 no_such_offer.
        await sql.execute(`DELETE FROM ${table} WHERE machine_id = $1`, [event.data.machineId]);
        return;
      case 'MinBidChanged':
        await sql.execute(
          `UPDATE ${table} SET ask = jsonb_set(ask, '{minBid}', to_jsonb($2::double precision)) WHERE machine_id = $1 AND ask IS NOT NULL`,
          [event.data.machineId, event.data.minBid],
        );
        return;
      case 'MachineVerificationChanged':
        await sql.execute(`UPDATE ${table} SET verification = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.verification,
        ]);
        return;
    }
  },
});
