import type { MachineRegistered } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { knownMachinesProjection } from './projection';

const registered = (machineId: number, ownerId: number) => ({
  streamId: `machine-${machineId}`,
  type: 'MachineRegistered' as const,
  data: { machineId, ownerId } as MachineRegistered['data'],
});

describe('known_machines projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, knownMachinesProjection);
  afterAll(() => spec.close());

  it("knows each machine's owner from its registration", () =>
    spec
      .given([registered(40, 2)])
      .when(registered(41, 3))
      .then(`SELECT machine_id, owner_id FROM sync_maintenance.known_machines ORDER BY 1`, [
        { machine_id: 40, owner_id: 2 },
        { machine_id: 41, owner_id: 3 },
      ]));
});
