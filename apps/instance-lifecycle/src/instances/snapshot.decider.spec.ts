import type { InstanceEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { InstanceErrors, instanceDecider } from './instance.decider';
import { SNAPSHOT_STALE_MS, SNAPSHOT_STALE_MSG } from './snapshot.decider';
import { AT, billing, destroyed, opened, state } from './testing/instance-fixtures';

const spec = deciderSpec(instanceDecider);
const IMAGE = '127.0.0.1:5000/alice/snap:v1';
const LATER = new Date(Date.parse(AT) + SNAPSHOT_STALE_MS).toISOString();
const running: InstanceEvent[] = [...opened, state('running'), billing('compute', 2_000_000)];
const requested = (snapshotId: number, at = AT, pause = true): InstanceEvent => ({
  type: 'InstanceSnapshotRequested',
  data: { instanceId: 7, snapshotId, image: IMAGE, pause, at },
});
const take = (requesterId = 2, at = AT) =>
  ({ type: 'TakeSnapshot', at, requesterId, image: IMAGE, pause: true }) as const;
const report = (snapshotId: number, digest: string | null, reason: string | null, at = AT) =>
  ({ type: 'ReportSnapshot', at, snapshotId, digest, reason }) as const;
const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('instance decider: snapshots (take snapshot)', () => {
  it('asks for a snapshot of a running instance, numbered from 1, one after the other', () => {
    spec
      .given(running)
      .when(take())
      .then([requested(1)]);
    spec
      .given([
        ...running,
        requested(1),
        { type: 'InstanceSnapshotFailed', data: { instanceId: 7, snapshotId: 1, reason: 'x', at: AT } },
      ])
      .when({ ...take(), pause: false })
      .then([requested(2, AT, false)]);
  });

  it('refuses a second snapshot while one runs (snapshot_in_progress), and a container that is not running', () => {
    spec
      .given([...running, requested(1)])
      .when(take())
      .thenThrows(InstanceErrors.snapshotRunning);
    spec.given(opened).when(take()).thenThrows(InstanceErrors.notRunning);
    spec
      .given([...running, state('stopped')])
      .when(take())
      .thenThrows(InstanceErrors.notRunning);
  });

  it("another account's, a destroyed or an unknown instance is no_such_instance", () => {
    spec.given(running).when(take(99)).thenThrows(InstanceErrors.notFound);
    spec
      .given([...running, destroyed])
      .when(take())
      .thenThrows(InstanceErrors.notFound);
    spec.given([]).when(take()).thenThrows(InstanceErrors.notFound);
  });

  it("records the host's digest or its failure, once; a report about another snapshot changes nothing", () => {
    spec
      .given([...running, requested(1)])
      .when(report(1, DIGEST, null))
      .then([
        {
          type: 'InstanceSnapshotCompleted',
          data: { instanceId: 7, snapshotId: 1, image: IMAGE, digest: DIGEST, at: AT },
        },
      ]);
    spec
      .given([...running, requested(1)])
      .when(report(1, null, 'unauthorized: authentication required'))
      .then([
        {
          type: 'InstanceSnapshotFailed',
          data: { instanceId: 7, snapshotId: 1, reason: 'unauthorized: authentication required', at: AT },
        },
      ]);
    const done: InstanceEvent = {
      type: 'InstanceSnapshotCompleted',
      data: { instanceId: 7, snapshotId: 1, image: IMAGE, digest: DIGEST, at: AT },
    };
    spec
      .given([...running, requested(1), done])
      .when(report(1, DIGEST, null))
      .thenNothingHappened();
    spec
      .given([...running, requested(1)])
      .when(report(2, DIGEST, null))
      .thenNothingHappened();
    spec
      .given([...running, requested(1), destroyed, billing('none', 0)])
      .when(report(1, DIGEST, null))
      .thenNothingHappened();
  });

  it('a snapshot its host never reported on is failed when stale: by the sweep, or by the next request', () => {
    const timedOut = (at: string): InstanceEvent => ({
      type: 'InstanceSnapshotFailed',
      data: { instanceId: 7, snapshotId: 1, reason: SNAPSHOT_STALE_MSG, at },
    });
    spec
      .given([...running, requested(1)])
      .when(report(1, null, SNAPSHOT_STALE_MSG, LATER))
      .then([timedOut(LATER)]);
    spec
      .given([...running, requested(1)])
      .when(take(2, LATER))
      .then([timedOut(LATER), requested(2, LATER)]);
  });
});
