import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import type { ProvisioningEvent } from '../../instances/create-instance/provisioning.workflow';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { openProvisioningsProjection } from './projection';

const T0 = '2026-05-01T12:00:00.000Z';
const T1 = '2026-05-01T12:00:01.000Z';
const requested = (instanceId: number): SpecEvent<ProvisioningEvent> => ({
  streamId: `provisioning-${instanceId}`,
  type: 'ProvisioningRequested',
  data: { instanceId, renter: 2, machineId: 7, numGpus: 1, machineGpus: 4, bid: null, at: T0 },
});
const allocated = (instanceId: number): SpecEvent<ProvisioningEvent> => ({
  streamId: `provisioning-${instanceId}`,
  type: 'ProvisioningGpusAllocated',
  data: { instanceId, machineId: 7, at: T1 },
});
const failed = (instanceId: number): SpecEvent<ProvisioningEvent> => ({
  streamId: `provisioning-${instanceId}`,
  type: 'ProvisioningFailed',
  data: { instanceId, reason: 'instance not created: unexpected error', at: T1 },
});
const created = (instanceId: number): SpecEvent<ProvisioningEvent> => ({
  streamId: `provisioning-${instanceId}`,
  type: 'ProvisioningInstanceCreated',
  data: { instanceId, at: T1 },
});
const rows = `SELECT instance_id, machine_id, step, updated_at::text AS updated_at
  FROM instance_lifecycle.open_provisionings ORDER BY 1`;

describe('open_provisionings projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, openProvisioningsProjection);
  afterAll(() => spec.close());

  it('lists the rents under way with their step; a completed or refused rent leaves the list', () =>
    spec
      .given([requested(1), requested(2), allocated(2), requested(3), allocated(3), requested(4)])
      .when(
        {
          streamId: 'provisioning-3',
          type: 'ProvisioningInstanceCreated',
          data: { instanceId: 3, at: T1 },
        },
        failed(4),
      )
      .then(rows, [
        { instance_id: 1, machine_id: 7, step: 'allocating', updated_at: '2026-05-01 12:00:00+00' },
        { instance_id: 2, machine_id: 7, step: 'creating', updated_at: '2026-05-01 12:00:01+00' },
      ]));

  it('keeps a failed rent that holds GPUs until they are released', () =>
    spec
      .given([requested(5), allocated(5), requested(6), allocated(6), failed(6)])
      .when(failed(5), {
        streamId: 'provisioning-6',
        type: 'ProvisioningGpusReleased',
        data: { instanceId: 6, machineId: 7, at: T1 },
      })
      .then(rows, [
        { instance_id: 5, machine_id: 7, step: 'compensating', updated_at: '2026-05-01 12:00:01+00' },
      ]));

  it('lists no rent recorded whole in one append, beside one still open', () =>
    spec
      .given([requested(7), allocated(7)])
      .when(requested(8), allocated(8), created(8))
      .then(rows, [
        { instance_id: 7, machine_id: 7, step: 'creating', updated_at: '2026-05-01 12:00:01+00' },
      ]));
});
