import type { MachineRegistered } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Machine owners, from marketplace's MachineRegistered. */
export const knownMachinesProjection = defineProjection<MachineRegistered>({
  name: 'known_machines',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.known_machines`],
  eventTypes: ['MachineRegistered'],
  async apply(sql, event) {
    await sql.execute(
      `INSERT INTO ${SCHEMA}.known_machines (machine_id, owner_id) VALUES ($1, $2) ON CONFLICT (machine_id) DO NOTHING`,
      [event.data.machineId, event.data.ownerId],
    );
  },
});
