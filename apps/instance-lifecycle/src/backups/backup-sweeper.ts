import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { BackgroundWork, type ContextRuntime } from '@rigmarket/event-sourcing';
import { BACKUP_STORE, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { SCHEMA } from '../schema';
import { BACKUP_OPTIONS, type BackupOptions, staleAfterMs } from './backup-options';
import { BackupReceiver } from './backup-receiver';
import type { BackupStore } from './backup-store';
import { runBackupCommand } from './backups';

/**
 * Keeps backups bounded (docs/instances.md, "Instance backups"): a backup still pending long after its
 * host's time limit is failed (the host never answered, or instance-lifecycle restarted mid-transfer); a
 * backup older than the retention is deleted, and so are a user's oldest beyond the per-user count (after
 * each stored backup, and every sweep interval). Deleting records InstanceBackupDeleted, then removes the objects.
 */
@Injectable()
export class BackupSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('BackupSweeper');
  private timer: NodeJS.Timeout | undefined;
  /** The sweeps and trims in progress: shutdown waits for them. */
  private readonly work = new BackgroundWork();

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(BACKUP_STORE) private readonly store: BackupStore,
    @Inject(BACKUP_OPTIONS) private readonly options: BackupOptions,
    receiver: BackupReceiver,
  ) {
    receiver.whenStored(
      (ownerId) => void this.work.run(() => this.trim(ownerId)).catch((e: unknown) => this.warn(e)),
    );
  }

  onApplicationBootstrap(): void {
    if (this.options.sweepIntervalMs <= 0) return;
    this.timer = setInterval(
      () => void this.work.run(() => this.sweep()).catch((e: unknown) => this.warn(e)),
      this.options.sweepIntervalMs,
    );
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.work.stop();
  }

  /** One pass: stale pending backups failed, expired ones deleted (at most 100 of each). */
  async sweep(now = new Date()): Promise<void> {
    const staleBefore = new Date(now.getTime() - staleAfterMs(this.options)).toISOString();
    const stale = await this.runtime.db.query<{ backup_id: number }>(
      `SELECT backup_id FROM ${SCHEMA}.instance_backups WHERE status = 'pending' AND requested_at < $1
        ORDER BY backup_id LIMIT 100`,
      [staleBefore],
    );
    for (const { backup_id } of stale)
      await runBackupCommand(this.runtime, Number(backup_id), {
        type: 'FailBackup',
        reason: `interrupted: the host did not finish within ${Math.round(staleAfterMs(this.options) / 60_000)} minutes`,
      });
    const expiredBefore = new Date(now.getTime() - this.options.retentionMs).toISOString();
    const expired = await this.runtime.db.query<{ backup_id: number }>(
      `SELECT backup_id FROM ${SCHEMA}.instance_backups WHERE status <> 'pending' AND requested_at < $1
        ORDER BY backup_id LIMIT 100`,
      [expiredBefore],
    );
    for (const { backup_id } of expired) await this.delete(Number(backup_id), 'expired');
  }

  /** A user's backups beyond the newest `maxPerUser` are deleted (pending ones are never counted out). */
  async trim(ownerId: number): Promise<void> {
    const surplus = await this.runtime.db.query<{ backup_id: number }>(
      `SELECT backup_id FROM ${SCHEMA}.instance_backups WHERE owner_id = $1 AND status <> 'pending'
        ORDER BY backup_id DESC OFFSET $2 LIMIT 100`,
      [ownerId, this.options.maxPerUser],
    );
    for (const { backup_id } of surplus) await this.delete(Number(backup_id), 'superseded');
  }

  private async delete(backupId: number, reason: 'expired' | 'superseded'): Promise<void> {
    await runBackupCommand(this.runtime, backupId, { type: 'DeleteBackup', reason });
    await this.store.remove(backupId);
  }

  private warn(error: unknown): void {
    this.logger.warn(`backup sweep failed: ${String(error)}`);
  }
}
