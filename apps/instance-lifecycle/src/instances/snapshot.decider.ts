import { DomainError, type InstanceEvent } from '@rigmarket/contracts';
import { type InstanceCommand, InstanceErrors } from './instance.commands';
import type { InstanceState } from './instance.state';

type SnapshotCommand = Extract<InstanceCommand, { type: 'TakeSnapshot' | 'ReportSnapshot' }>;

export const isSnapshotCommand = (command: InstanceCommand): command is SnapshotCommand =>
  command.type === 'TakeSnapshot' || command.type === 'ReportSnapshot';

/** How long a host may take to commit and push a snapshot before it gives up (and reports it failed). */
export const SNAPSHOT_TIME_LIMIT_MS = 30 * 60_000;
/**
 * A snapshot still running this long after it was asked for is taken as failed (its host never answered:
 * it went away, say): the SnapshotTimeouts sweep records it, and a new snapshot may be asked for.
 */
export const SNAPSHOT_STALE_MS = SNAPSHOT_TIME_LIMIT_MS + 2 * 60_000;
export const SNAPSHOT_STALE_MSG = `Snapshot failed: the host did not report within ${SNAPSHOT_STALE_MS / 60_000} minutes`;

const isStale = (requestedAt: string, at: string): boolean =>
  Date.parse(at) - Date.parse(requestedAt) >= SNAPSHOT_STALE_MS;

/**
 * Part of the instance decider (instance.decider.ts): `vastai take snapshot` and its host's outcome. A
 * snapshot needs a running container, and one runs at a time per instance (one still running
 * SNAPSHOT_STALE_MS after it was asked for is failed first); a report about another snapshot than the one
 * running (late, repeated) changes nothing.
 */
export function decideSnapshot(command: SnapshotCommand, state: InstanceState): InstanceEvent[] {
  if (command.type === 'ReportSnapshot') {
    if (state.status !== 'active' || state.snapshot?.snapshotId !== command.snapshotId) return [];
    const { instanceId, snapshot } = state;
    if (command.digest !== null)
      return [
        {
          type: 'InstanceSnapshotCompleted',
          data: {
            instanceId,
            snapshotId: snapshot.snapshotId,
            image: snapshot.image,
            digest: command.digest,
            at: command.at,
          },
        },
      ];
    return [
      {
        type: 'InstanceSnapshotFailed',
        data: {
          instanceId,
          snapshotId: snapshot.snapshotId,
          reason: command.reason ?? 'the host gave no reason',
          at: command.at,
        },
      },
    ];
  }
  // Another renter's instance is reported as missing, like a destroyed one.
  if (state.status !== 'active' || state.renter !== command.requesterId)
    throw new DomainError(InstanceErrors.notFound, 'No such instance');
  const { instanceId } = state;
  if (state.pendingVolume || state.intended !== 'running' || state.actual !== 'running')
    throw new DomainError(
      InstanceErrors.notRunning,
      `Instance ${instanceId} is not running (${String(state.actual ?? 'provisioning')}); a snapshot is taken of a running container`,
    );
  const events: InstanceEvent[] = [];
  if (state.snapshot) {
    if (!isStale(state.snapshot.requestedAt, command.at))
      throw new DomainError(
        InstanceErrors.snapshotRunning,
        `Snapshot ${state.snapshot.snapshotId} of instance ${instanceId} (${state.snapshot.image}) is still being taken; wait for it to finish`,
      );
    events.push({
      type: 'InstanceSnapshotFailed',
      data: { instanceId, snapshotId: state.snapshot.snapshotId, reason: SNAPSHOT_STALE_MSG, at: command.at },
    });
  }
  events.push({
    type: 'InstanceSnapshotRequested',
    data: {
      instanceId,
      snapshotId: state.nextSnapshotId,
      image: command.image,
      pause: command.pause,
      at: command.at,
    },
  });
  return events;
}
