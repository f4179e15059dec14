import type { InstanceConfig, InstanceEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { CREDIT_RELEASED_MSG, OUTBID_MSG, waitingForVolumeMsg } from './status-messages';

/**
 * The mutable parts of a row kept as JSON (the rest are columns, for filters and ordering). The machine's
 * GPU RAM and address are read with the row from market_machines (queries/instance-rows.ts); rows written
 * before that carry them here.
 */
export interface InstanceDetails {
  hostId: number;
  offerId: number;
  gpuRam?: number;
  publicIpaddr?: string | null;
  bidPrice: number | null;
  config: InstanceConfig;
  sshHost: string | null;
  sshPort: number | null;
  ports: Record<string, number>;
  statusMsg: string | null;
  /** The attached SSH public keys, oldest first (absent until the first attach). */
  sshKeys?: { keyId: number; publicKey: string }[];
  /** The last snapshot asked for (absent until the first `take snapshot`). */
  snapshot?: SnapshotDetails;
}

/** A snapshot as show instance gives it (docs/instances.md, Snapshots). */
export interface SnapshotDetails {
  snapshotId: number;
  status: 'running' | 'done' | 'failed';
  image: string;
  pause: boolean;
  /** The pushed manifest's digest, once done. */
  digest: string | null;
  msg: string;
  requestedAt: string;
  finishedAt: string | null;
}

/** The authorized_keys lines of an instance's row, oldest first. */
export const authorizedKeys = (details: Pick<InstanceDetails, 'sshKeys'>): string[] =>
  (details.sshKeys ?? []).map((k) => k.publicKey);

/** The instances read model. Inline: the row is current in the command's own transaction (read-your-writes). */
export const instancesProjection = defineProjection<InstanceEvent>({
  name: 'instances',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.instances`],
  eventTypes: [
    'InstanceCreated',
    'InstanceStateChanged',
    'InstanceIntentChanged',
    'InstanceLabelled',
    'InstanceOutbid',
    'InstanceBidChanged',
    'InstanceVolumeAttached',
    'InstanceConfigUpdated',
    'InstanceSshKeyAttached',
    'InstanceSshKeyDetached',
    'InstanceSnapshotRequested',
    'InstanceSnapshotCompleted',
    'InstanceSnapshotFailed',
    'InstanceDestroyed',
  ],
  async apply(sql, event) {
    const table = `${SCHEMA}.instances`;
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data;
        const details: InstanceDetails = {
          hostId: d.hostId,
          offerId: d.offerId,
          bidPrice: d.bidPrice,
          config: d.config,
          sshHost: null,
          sshPort: null,
          ports: {},
          statusMsg: d.config.newVolume ? waitingForVolumeMsg(d.config.newVolume) : 'Provisioning',
        };
        await sql.execute(
          `INSERT INTO ${table} (instance_id, owner_id, machine_id, actual_status, intended_status, label, gpu_name, num_gpus, dph_total, start_date, details)
           VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (instance_id) DO NOTHING`,
          [
            d.instanceId,
            d.renter,
            d.machineId,
            d.targetState,
            d.label,
            d.gpuName,
            d.numGpus,
            d.dphTotal,
            new Date(d.createdAt).getTime() / 1000,
            JSON.stringify(details),
          ],
        );
        return;
      }
      case 'InstanceStateChanged': {
        const d = event.data;
        const patch = { sshHost: d.sshHost, sshPort: d.sshPort, ports: d.ports, statusMsg: d.statusMsg };
        await sql.execute(
          `UPDATE ${table} SET actual_status = $2, details = details || $3::jsonb WHERE instance_id = $1`,
          [d.instanceId, d.actualStatus, JSON.stringify(patch)],
        );
        return;
      }
      case 'InstanceIntentChanged':
        await sql.execute(`UPDATE ${table} SET intended_status = $2 WHERE instance_id = $1`, [
          event.data.instanceId,
          event.data.intendedStatus,
        ]);
        return;
      case 'InstanceLabelled':
        await sql.execute(`UPDATE ${table} SET label = $2 WHERE instance_id = $1`, [
          event.data.instanceId,
          event.data.label,
        ]);
        return;
      case 'InstanceOutbid':
        await sql.execute(
          `UPDATE ${table} SET intended_status = 'stopped', details = details || $2::jsonb WHERE instance_id = $1`,
          [
            event.data.instanceId,
            JSON.stringify({ statusMsg: event.data.reason === 'credit' ? CREDIT_RELEASED_MSG : OUTBID_MSG }),
          ],
        );
        return;
      case 'InstanceBidChanged':
        await sql.execute(
          `UPDATE ${table} SET dph_total = $2, details = details || $3::jsonb WHERE instance_id = $1`,
          [event.data.instanceId, event.data.price, JSON.stringify({ bidPrice: event.data.price })],
        );
        return;
      case 'InstanceVolumeAttached': {
        const volume = { volumeId: event.data.volumeId, mountPath: event.data.mountPath };
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{config,volume}', $2::jsonb) || $3::jsonb WHERE instance_id = $1`,
          [event.data.instanceId, JSON.stringify(volume), JSON.stringify({ statusMsg: 'Provisioning' })],
        );
        return;
      }
      case 'InstanceConfigUpdated':
        // The changed settings replace the config's (env as a whole); the rest of the config stays.
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{config}', (details->'config') || $2::jsonb) WHERE instance_id = $1`,
          [event.data.instanceId, JSON.stringify(event.data.changes)],
        );
        return;
      case 'InstanceSshKeyAttached': {
        const key = { keyId: event.data.keyId, publicKey: event.data.publicKey };
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{sshKeys}', COALESCE(details->'sshKeys', '[]'::jsonb) || $2::jsonb)
            WHERE instance_id = $1`,
          [event.data.instanceId, JSON.stringify([key])],
        );
        return;
      }
      case 'InstanceSshKeyDetached':
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{sshKeys}', COALESCE(
             (SELECT jsonb_agg(e.k ORDER BY e.n) FROM jsonb_array_elements(details->'sshKeys') WITH ORDINALITY AS e(k, n)
               WHERE (e.k->>'keyId')::int <> $2),
             '[]'::jsonb))
            WHERE instance_id = $1`,
          [event.data.instanceId, event.data.keyId],
        );
        return;
      case 'InstanceSnapshotRequested': {
        const d = event.data;
        const snapshot: SnapshotDetails = {
          snapshotId: d.snapshotId,
          status: 'running',
          image: d.image,
          pause: d.pause,
          digest: null,
          msg: `Snapshot ${d.snapshotId}: committing the container${d.pause ? ' (paused)' : ''} and pushing ${d.image}`,
          requestedAt: d.at,
          finishedAt: null,
        };
        await sql.execute(
          `UPDATE ${table} SET details = details || jsonb_build_object('snapshot', $2::jsonb) WHERE instance_id = $1`,
          [d.instanceId, JSON.stringify(snapshot)],
        );
        return;
      }
      case 'InstanceSnapshotCompleted':
      case 'InstanceSnapshotFailed': {
        const d = event.data;
        const done = event.type === 'InstanceSnapshotCompleted';
        const patch = {
          status: done ? 'done' : 'failed',
          digest: done ? event.data.digest : null,
          msg: done
            ? `Snapshot ${d.snapshotId} pushed: ${event.data.image}@${event.data.digest}`
            : `Snapshot ${d.snapshotId} failed: ${event.data.reason}`,
          finishedAt: d.at,
        };
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{snapshot}', details->'snapshot' || $3::jsonb)
            WHERE instance_id = $1 AND (details->'snapshot'->>'snapshotId')::int = $2`,
          [d.instanceId, d.snapshotId, JSON.stringify(patch)],
        );
        return;
      }
      case 'InstanceDestroyed':
        // Its key and pending provision go in the same transaction, with the host commands (host-commands.ts).
        await sql.execute(`UPDATE ${table} SET destroyed = TRUE WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        return;
    }
  },
});
