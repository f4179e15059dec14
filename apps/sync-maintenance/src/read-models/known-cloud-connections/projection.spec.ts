import { projectionSpec } from '@rigmarket/testing';
import { syncMaintenanceContext } from '../../sync-maintenance.context';
import { knownCloudConnectionsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';

describe('known_cloud_connections projection', () => {
  const spec = projectionSpec(syncMaintenanceContext, knownCloudConnectionsProjection);
  afterAll(() => spec.close());

  it("keeps each listed connection's account; a removed one is gone", () =>
    spec
      .given([
        {
          streamId: 'cloud_connections-2',
          type: 'CloudConnectionListed',
          data: { userId: 2, connectionId: 101, at: AT },
        },
        {
          streamId: 'cloud_connections-3',
          type: 'CloudConnectionListed',
          data: { userId: 3, connectionId: 102, at: AT },
        },
        {
          streamId: 'cloud_connections-2',
          type: 'CloudConnectionListed',
          data: { userId: 2, connectionId: 103, at: AT },
        },
      ])
      .when({
        streamId: 'cloud_connections-2',
        type: 'CloudConnectionRemoved',
        data: { userId: 2, connectionId: 101, at: AT },
      })
      .then(`SELECT connection_id, user_id FROM sync_maintenance.known_cloud_connections ORDER BY 1`, [
        { connection_id: 102, user_id: 3 },
        { connection_id: 103, user_id: 2 },
      ]));
});
