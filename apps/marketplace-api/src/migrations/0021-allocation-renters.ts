import { type Migration, replayProjection } from '@rigmarket/event-sourcing';
import { machinesProjection } from '../read-models/machines/projection';

/**
 * instance_allocations learns each instance's renter (`vastai delete machine` is refused while other users
 * have instances on the machine), and a host's default job holds no row (its GPUs stay in offers): the
 * machines read model is replayed from the machine and instance streams once.
 */
export const allocationRenters: Migration = {
  id: '0021-allocation-renters',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.instance_allocations ADD COLUMN renter_id INTEGER`);
    await replayProjection(sql, s, machinesProjection);
  },
};
