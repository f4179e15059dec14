import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { cloudConnectionsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';
const added = (userId: number, connectionId: number, name: string) => ({
  streamId: `cloud_connections-${userId}`,
  type: 'CloudConnectionAdded',
  data: {
    userId,
    connectionId,
    name,
    cloudType: 's3',
    endpoint: 'http://127.0.0.1:9000',
    region: 'us-east-1',
    accessKeyHint: 'WXYZ',
    credentialsSealed: `v1:sealed-${connectionId}`,
    at: AT,
  },
});

describe('cloud_connections projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, cloudConnectionsProjection);
  afterAll(() => spec.close());

  it("keeps each account's connections, credentials sealed; a removed one is gone", () =>
    spec
      .given([added(2, 101, 'backups'), added(2, 102, 'datasets'), added(3, 103, 'backups')])
      .when({
        streamId: 'cloud_connections-2',
        type: 'CloudConnectionRemoved',
        data: { userId: 2, connectionId: 101, at: AT },
      })
      .then(
        `SELECT connection_id, user_id, name, credentials_sealed FROM instance_lifecycle.cloud_connections ORDER BY connection_id`,
        [
          { connection_id: 102, user_id: 2, name: 'datasets', credentials_sealed: 'v1:sealed-102' },
          { connection_id: 103, user_id: 3, name: 'backups', credentials_sealed: 'v1:sealed-103' },
        ],
      ));
});
