import type { InstanceCreated } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { webhookInstanceOwnersProjection } from './projection';

const created = (instanceId: number, renter: number, machineId: number) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated' as const,
  data: { instanceId, renter, machineId } as InstanceCreated['data'],
});

describe('webhook_instance_owners projection', () => {
  const spec = projectionSpec(identityContext, webhookInstanceOwnersProjection);
  afterAll(() => spec.close());

  it("keeps each instance's renter and machine, and marks the destroyed ones", () =>
    spec
      .given([created(11, 2, 5), created(12, 3, 5), created(13, 2, 6)])
      .when({
        streamId: 'instance-12',
        type: 'InstanceDestroyed',
        data: { instanceId: 12, renter: 3, machineId: 5, numGpus: 1, at: '2026-05-01T12:00:00.000Z' },
      })
      .then(
        `SELECT instance_id, owner_id, machine_id, destroyed FROM identity.webhook_instance_owners ORDER BY instance_id`,
        [
          { instance_id: 11, owner_id: 2, machine_id: 5, destroyed: false },
          { instance_id: 12, owner_id: 3, machine_id: 5, destroyed: true },
          { instance_id: 13, owner_id: 2, machine_id: 6, destroyed: false },
        ],
      ));
});
