import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import { BackgroundWork, type ContextRuntime } from '@rigmarket/event-sourcing';
import { HostReporter } from '../../host/host-reporter';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { SCHEMA } from '../../schema';
import { SNAPSHOT_STALE_MS, SNAPSHOT_STALE_MSG } from '../snapshot.decider';

const SWEEP_MS = 60_000;

/**
 * A host enforces a snapshot's time limit itself and reports the failure; one that never reports (its
 * agent went away) would leave the snapshot running forever. Every minute this records the snapshots
 * still running SNAPSHOT_STALE_MS after they were asked for as failed; a report of that snapshot arriving
 * later changes nothing.
 */
@Injectable()
export class SnapshotTimeouts implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  /** The sweep in progress: shutdown waits for it. */
  private readonly work = new BackgroundWork();

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly reporter: HostReporter,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.work.run(() => this.sweep()).catch(() => undefined), SWEEP_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.work.stop();
  }

  /** Records the stale snapshots as failed; returns how many it looked at (at most 100 a sweep). */
  async sweep(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - SNAPSHOT_STALE_MS).toISOString();
    const rows = await this.runtime.db.query<{ instance_id: number; snapshot_id: string }>(
      `SELECT instance_id, details->'snapshot'->>'snapshotId' AS snapshot_id FROM ${SCHEMA}.instances
        WHERE NOT destroyed AND details->'snapshot'->>'status' = 'running'
          AND details->'snapshot'->>'requestedAt' < $1
        ORDER BY instance_id LIMIT 100`,
      [before],
    );
    for (const row of rows)
      await this.reporter.reportSnapshot(Number(row.instance_id), Number(row.snapshot_id), {
        digest: null,
        reason: SNAPSHOT_STALE_MSG,
      });
    return rows.length;
  }
}
