import type { InstanceConfig, InstanceCreated } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { instancesProjection } from './projection';
import { OUTBID_MSG } from './status-messages';

const at = '2026-05-01T12:00:00.000Z';
const created = (instanceId: number, config: Partial<InstanceConfig> = {}): SpecEvent<InstanceCreated> => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated',
  data: {
    instanceId,
    renter: 2,
    machineId: 7,
    hostId: 3,
    offerId: 7001,
    numGpus: 1,
    gpuName: 'RTX 4090',
    dphTotal: 0.5,
    bidPrice: null,
    label: null,
    targetState: 'running',
    config: { image: 'busybox', ...config } as InstanceConfig,
    createdAt: at,
  },
});

const row = `SELECT instance_id, actual_status, intended_status, label, dph_total, destroyed,
  details->>'statusMsg' AS status_msg, details->>'sshPort' AS ssh_port, details->'bidPrice' AS bid, details->'config'->'volume' AS volume
  FROM instance_lifecycle.instances ORDER BY 1`;

describe('instances projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, instancesProjection);
  afterAll(() => spec.close());

  it("follows an instance's state, intent, label and bid", () =>
    spec
      .given([
        created(9),
        {
          streamId: 'instance-9',
          type: 'InstanceStateChanged',
          data: {
            instanceId: 9,
            actualStatus: 'running',
            sshHost: 'h',
            sshPort: 2222,
            ports: {},
            statusMsg: 'up',
            at,
          },
        },
        { streamId: 'instance-9', type: 'InstanceLabelled', data: { instanceId: 9, label: 'train', at } },
        { streamId: 'instance-9', type: 'InstanceBidChanged', data: { instanceId: 9, price: 0.4, at } },
      ])
      .when({
        streamId: 'instance-9',
        type: 'InstanceIntentChanged',
        data: { instanceId: 9, intendedStatus: 'stopped', at },
      })
      .then(row, [
        {
          instance_id: 9,
          actual_status: 'running',
          intended_status: 'stopped',
          label: 'train',
          dph_total: 0.4,
          destroyed: false,
          status_msg: 'up',
          ssh_port: '2222',
          bid: 0.4,
          volume: null,
        },
      ]));

  it('takes an updated config: the changed settings replace their own (env whole), the rest stays', () =>
    spec
      .given([created(4, { env: { OLD: '1', KEEP: 'no' }, onstart: 'echo old', disk: 8 })])
      .when({
        streamId: 'instance-4',
        type: 'InstanceConfigUpdated',
        data: { instanceId: 4, changes: { image: 'busybox:1.36', env: { NEW: '2' }, onstart: null }, at },
      })
      .then(
        `SELECT details->'config'->>'image' AS image, details->'config'->'env' AS env,
                details->'config'->>'onstart' AS onstart, details->'config'->'disk' AS disk
           FROM instance_lifecycle.instances WHERE instance_id = 4`,
        [{ image: 'busybox:1.36', env: { NEW: '2' }, onstart: null, disk: 8 }],
      ));

  it('waits for a created volume, then attaches it; an outbid instance stops; a destroyed one is marked', () =>
    spec
      .given([
        created(10, { newVolume: { volumeOfferId: 7, sizeGb: 20, name: null, mountPath: '/data' } }),
        {
          streamId: 'instance-10',
          type: 'InstanceVolumeAttached',
          data: { instanceId: 10, volumeId: 5, mountPath: '/data', at },
        },
        created(11),
        {
          streamId: 'instance-11',
          type: 'InstanceOutbid',
          data: { instanceId: 11, machineId: 7, numGpus: 1, at },
        },
        created(12),
      ])
      .when({
        streamId: 'instance-12',
        type: 'InstanceDestroyed',
        data: { instanceId: 12, renter: 2, machineId: 7, numGpus: 1, at },
      })
      .then(
        `SELECT instance_id, intended_status, destroyed, details->>'statusMsg' AS status_msg, details->'config'->'volume' AS volume
           FROM instance_lifecycle.instances ORDER BY 1`,
        [
          {
            instance_id: 10,
            intended_status: 'running',
            destroyed: false,
            status_msg: 'Provisioning',
            volume: { volumeId: 5, mountPath: '/data' },
          },
          {
            instance_id: 11,
            intended_status: 'stopped',
            destroyed: false,
            status_msg: OUTBID_MSG,
            volume: null,
          },
          {
            instance_id: 12,
            intended_status: 'running',
            destroyed: true,
            status_msg: 'Provisioning',
            volume: null,
          },
        ],
      ));

  it("keeps each instance's last snapshot: running, then done with its digest or failed with the reason", () => {
    const image = '127.0.0.1:5000/alice/snap:latest';
    const digest = `sha256:${'b'.repeat(64)}`;
    return spec
      .given([
        created(20),
        {
          streamId: 'instance-20',
          type: 'InstanceSnapshotRequested',
          data: { instanceId: 20, snapshotId: 1, image, pause: true, at },
        },
        {
          streamId: 'instance-20',
          type: 'InstanceSnapshotCompleted',
          data: { instanceId: 20, snapshotId: 1, image, digest, at },
        },
        created(21),
        {
          streamId: 'instance-21',
          type: 'InstanceSnapshotRequested',
          data: { instanceId: 21, snapshotId: 1, image, pause: false, at },
        },
        {
          streamId: 'instance-21',
          type: 'InstanceSnapshotFailed',
          data: { instanceId: 21, snapshotId: 1, reason: 'unauthorized', at },
        },
        created(22),
      ])
      .when({
        streamId: 'instance-22',
        type: 'InstanceSnapshotRequested',
        data: { instanceId: 22, snapshotId: 3, image, pause: false, at },
      })
      .then(
        `SELECT instance_id, details->'snapshot' AS snapshot FROM instance_lifecycle.instances ORDER BY 1`,
        [
          {
            instance_id: 20,
            snapshot: {
              snapshotId: 1,
              status: 'done',
              image,
              pause: true,
              digest,
              msg: `Snapshot 1 pushed: ${image}@${digest}`,
              requestedAt: at,
              finishedAt: at,
            },
          },
          {
            instance_id: 21,
            snapshot: {
              snapshotId: 1,
              status: 'failed',
              image,
              pause: false,
              digest: null,
              msg: 'Snapshot 1 failed: unauthorized',
              requestedAt: at,
              finishedAt: at,
            },
          },
          {
            instance_id: 22,
            snapshot: {
              snapshotId: 3,
              status: 'running',
              image,
              pause: false,
              digest: null,
              msg: `Snapshot 3: committing the container and pushing ${image}`,
              requestedAt: at,
              finishedAt: null,
            },
          },
        ],
      );
  });
});
