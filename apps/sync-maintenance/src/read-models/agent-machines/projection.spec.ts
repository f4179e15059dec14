import { projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { agentMachinesProjection } from './projection';

describe('agent_machines projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, agentMachinesProjection);
  afterAll(() => spec.close());

  it('records each machine a host agent enrolled, with its driver, once', () =>
    spec
      .given([
        {
          streamId: 'hostagent-40',
          type: 'HostAgentEnrolled',
          data: { machineId: 40, ownerId: 2, driver: 'docker', at: '2026-05-01T12:00:00.000Z' },
        },
      ])
      .when({
        streamId: 'hostagent-41',
        type: 'HostAgentEnrolled',
        data: { machineId: 41, ownerId: 2, driver: 'simulated', at: '2026-05-01T12:01:00.000Z' },
      })
      .then(`SELECT machine_id, driver FROM sync_maintenance.agent_machines ORDER BY 1`, [
        { machine_id: 40, driver: 'docker' },
        { machine_id: 41, driver: 'simulated' },
      ]));
});
