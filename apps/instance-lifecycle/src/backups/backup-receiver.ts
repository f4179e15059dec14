import type { Writable } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type AgentBackupRequest, isRefusal } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { AgentSessions } from '../agent/agent-sessions';
import { BACKUP_STORE, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { SCHEMA } from '../schema';
import { BACKUP_OBJECT, type BackupStore } from './backup-store';
import { runBackupCommand } from './backups';

interface Upload {
  machineId: number;
  request: AgentBackupRequest;
  sink: Writable;
  done: Promise<number>;
  /** Bytes received from the agent, and bytes the store has taken (acknowledged to the agent). */
  received: number;
  stored: number;
}

const gb = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/**
 * instance-lifecycle's end of backups (docs/instances.md, "Instance backups"): what an agent sends up in
 * backup frames goes into the BackupStore as it arrives, each chunk acknowledged once the store took it (the
 * agent never runs more than a window ahead); the agent's backup_sent closes the object and records the
 * backup stored with its size, its backup_failed (or its going away, or the object growing over the bound)
 * records it failed with the reason and removes what was written.
 */
@Injectable()
export class BackupReceiver implements OnApplicationShutdown {
  private readonly logger = new Logger('BackupReceiver');
  private readonly uploads = new Map<number, Upload>();
  /** Told after a backup is stored (retention runs then). */
  private onStored: (ownerId: number) => void = () => undefined;

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(BACKUP_STORE) private readonly store: BackupStore,
    private readonly sessions: AgentSessions,
  ) {}

  whenStored(callback: (ownerId: number) => void): void {
    this.onStored = callback;
  }

  async onApplicationShutdown(): Promise<void> {
    for (const backupId of [...this.uploads.keys()])
      await this.abandon(backupId, 'interrupted: the platform stopped while the backup was being taken');
  }

  /** The agent of `machineId` is about to send this backup. */
  expect(machineId: number, request: AgentBackupRequest): void {
    if (this.uploads.has(request.backupId)) return;
    const { sink, done } = this.store.create(request.backupId, BACKUP_OBJECT);
    done.catch(() => undefined);
    sink.on('error', () => undefined);
    this.uploads.set(request.backupId, { machineId, request, sink, done, received: 0, stored: 0 });
  }

  /** A backup frame from the agent of `machineId` (one for another machine's backup is dropped). */
  data(machineId: number, backupId: number, bytes: Buffer): void {
    const upload = this.uploads.get(backupId);
    if (!upload || upload.machineId !== machineId) return;
    upload.received += bytes.length;
    if (upload.received > upload.request.maxBytes) {
      this.sessions.send(machineId, { type: 'backup_abort', backupId, reason: 'over the bound' });
      void this.abandon(backupId, this.overBound(upload.request.maxBytes));
      return;
    }
    upload.sink.write(bytes, (error) => {
      if (error || this.uploads.get(backupId) !== upload) return;
      upload.stored += bytes.length;
      this.sessions.send(machineId, { type: 'backup_ack', backupId, bytes: upload.stored });
    });
  }

  /** The agent sent the whole tar (`bytes`). */
  async sent(machineId: number, backupId: number, bytes: number): Promise<void> {
    const upload = this.uploads.get(backupId);
    if (!upload || upload.machineId !== machineId) return;
    upload.sink.end();
    let size: number;
    try {
      size = await upload.done;
    } catch (error) {
      return this.abandon(backupId, `the backup could not be stored: ${String(error)}`);
    }
    if (this.uploads.get(backupId) !== upload) return;
    this.uploads.delete(backupId);
    if (size !== bytes) {
      await this.store.remove(backupId);
      return this.fail(backupId, `incomplete: ${size} of ${bytes} bytes arrived`);
    }
    await this.record(backupId, { type: 'StoreBackup', files: [{ name: BACKUP_OBJECT, size }] });
    const owner = await this.runtime.db.query<{ owner_id: number }>(
      `SELECT owner_id FROM ${SCHEMA}.instance_backups WHERE backup_id = $1`,
      [backupId],
    );
    if (owner[0]) this.onStored(Number(owner[0].owner_id));
  }

  /** The agent could not take the backup. */
  async failed(machineId: number, backupId: number, reason: string): Promise<void> {
    const upload = this.uploads.get(backupId);
    if (!upload || upload.machineId !== machineId) return;
    await this.abandon(backupId, reason);
  }

  /** The agent's channel closed: its backups under way fail. */
  agentGone(machineId: number): void {
    for (const [backupId, upload] of this.uploads)
      if (upload.machineId === machineId)
        void this.abandon(backupId, 'interrupted: the host agent disconnected while sending the backup');
  }

  /** Records the backup failed (it never reached the store, or the host could not take it). */
  async fail(backupId: number, reason: string): Promise<void> {
    await this.record(backupId, { type: 'FailBackup', reason });
  }

  overBound(maxBytes: number): string {
    return `the container's changes are larger than the backup limit of ${gb(maxBytes)}; nothing was kept`;
  }

  private async abandon(backupId: number, reason: string): Promise<void> {
    const upload = this.uploads.get(backupId);
    if (!upload) return;
    this.uploads.delete(backupId);
    upload.sink.destroy(new Error(reason));
    await upload.done.catch(() => undefined);
    await this.store.remove(backupId).catch(() => undefined);
    await this.fail(backupId, reason);
  }

  private async record(
    backupId: number,
    command:
      | { type: 'StoreBackup'; files: { name: string; size: number }[] }
      | { type: 'FailBackup'; reason: string },
  ): Promise<void> {
    try {
      await runBackupCommand(this.runtime, backupId, command);
    } catch (error) {
      this.logger.warn(
        `backup ${backupId}: ${command.type} ${isRefusal(error) ? 'refused' : 'failed'}: ${String(error)}`,
      );
    }
  }
}
