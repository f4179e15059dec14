import { deciderSpec } from '@rigmarket/testing';
import {
  CLOUD_CONNECTION_LIMITS,
  CloudConnectionErrors,
  type CloudConnectionEvent,
  cloudConnectionsDecider,
} from './cloud-connection.decider';

const AT = '2026-05-01T12:00:00.000Z';
const connection = { cloudType: 's3' as const, endpoint: 'http://127.0.0.1:9000', region: 'us-east-1' };
const added = (connectionId: number, name: string): CloudConnectionEvent => ({
  type: 'CloudConnectionAdded',
  data: {
    userId: 2,
    connectionId,
    name,
    ...connection,
    accessKeyHint: 'WXYZ',
    credentialsSealed: 'v1:sealed',
    at: AT,
  },
});
const listed = (connectionId: number): CloudConnectionEvent => ({
  type: 'CloudConnectionListed',
  data: { userId: 2, connectionId, at: AT },
});
const add = (connectionId: number, name: string) => ({
  type: 'AddCloudConnection' as const,
  at: AT,
  userId: 2,
  connectionId,
  name,
  ...connection,
  accessKeyHint: 'WXYZ',
  credentialsSealed: 'v1:sealed',
});
const spec = deciderSpec(cloudConnectionsDecider);

describe("an account's cloud connections", () => {
  it('adds a connection and lists it publicly (no credentials); a second of the same name is refused', () => {
    spec
      .given([])
      .when(add(7, 'backups'))
      .then([added(7, 'backups'), listed(7)]);
    spec
      .given([added(7, 'backups')])
      .when(add(8, 'backups'))
      .thenThrows(CloudConnectionErrors.exists);
    spec
      .given([added(7, 'backups')])
      .when(add(8, 'datasets'))
      .then([added(8, 'datasets'), listed(8)]);
  });

  it('removes only a connection the account has, once; its name is free again', () => {
    const removed: CloudConnectionEvent = {
      type: 'CloudConnectionRemoved',
      data: { userId: 2, connectionId: 7, at: AT },
    };
    spec
      .given([added(7, 'backups')])
      .when({ type: 'RemoveCloudConnection', at: AT, userId: 2, connectionId: 7 })
      .then([removed]);
    spec
      .given([added(7, 'backups'), removed])
      .when({ type: 'RemoveCloudConnection', at: AT, userId: 2, connectionId: 7 })
      .thenThrows(CloudConnectionErrors.notFound);
    spec
      .given([added(7, 'backups')])
      .when({ type: 'RemoveCloudConnection', at: AT, userId: 2, connectionId: 9 })
      .thenThrows(CloudConnectionErrors.notFound);
    spec
      .given([added(7, 'backups'), listed(7), removed])
      .when(add(8, 'backups'))
      .then([added(8, 'backups'), listed(8)]);
  });

  it(`keeps at most ${CLOUD_CONNECTION_LIMITS.perAccount} connections per account`, () => {
    const full = Array.from({ length: CLOUD_CONNECTION_LIMITS.perAccount }, (_, i) => added(i + 1, `c${i}`));
    spec.given(full).when(add(100, 'one-more')).thenThrows('bad_request');
  });
});
