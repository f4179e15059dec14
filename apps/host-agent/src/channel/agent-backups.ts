import { type AgentBackupRequest, encodeBackupData } from '@rigmarket/contracts';
import type { AgentDriver } from '../drivers/agent-driver';
import type { CopyChannel } from './agent-copies';
import { type Window, acknowledge, closeWindow, openWindow, sendThrottled } from './windowed-send';

const reasonOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 300);

/**
 * The host agent's side of instance backups (docs/instances.md, "Instance backups"): a tar of what the
 * instance's container changed (its driver's backupArchive) goes up the channel in backup frames, within the
 * window instance-lifecycle acknowledges and the rate it asked for. Over the request's byte bound or time
 * limit it stops and says why (backup_failed); otherwise backup_sent. `take` settles only when the tar has
 * been read to its end or given up, so the instance's destroy (queued after it) removes the container after.
 */
export class AgentBackups {
  private readonly senders = new Map<number, Window>();

  constructor(
    private readonly driver: AgentDriver,
    private readonly channel: CopyChannel,
  ) {}

  ack(backupId: number, bytes: number): void {
    const sender = this.senders.get(backupId);
    if (sender) acknowledge(sender, bytes);
  }

  abort(backupId: number, reason: string): void {
    const sender = this.senders.get(backupId);
    if (!sender) return;
    this.senders.delete(backupId);
    closeWindow(sender, reason);
    this.channel.log(`backup ${backupId} stopped: ${reason}`);
  }

  abortAll(reason: string): void {
    for (const backupId of [...this.senders.keys()]) this.abort(backupId, reason);
  }

  async take(request: AgentBackupRequest): Promise<void> {
    const { backupId, instanceId, maxBytes, timeLimitMs, bytesPerSecond } = request;
    const sender = openWindow();
    this.senders.set(backupId, sender);
    const signal = sender.abort.signal;
    const timer = setTimeout(
      () =>
        closeWindow(sender, `the host gave up after the time limit of ${Math.ceil(timeLimitMs / 1000)} s`),
      timeLimitMs,
    );
    try {
      const tar = await this.driver.backupArchive(instanceId, signal);
      const sent = await sendThrottled(
        tar,
        bytesPerSecond,
        sender,
        (piece) => encodeBackupData(backupId, piece),
        (frame) => this.channel.sendBinary(frame),
        (total) => {
          if (total > maxBytes)
            throw new Error(
              `the container's changes are larger than the backup limit of ${(maxBytes / 1024 ** 3).toFixed(2)} GiB; nothing was kept`,
            );
        },
      );
      this.channel.send({ type: 'backup_sent', backupId, bytes: sent });
      this.channel.log(`backup ${backupId} of instance ${instanceId}: ${sent} bytes sent`);
    } catch (error) {
      const reason = signal.aborted ? reasonOf(signal.reason) : reasonOf(error);
      this.channel.log(`backup ${backupId} of instance ${instanceId} failed: ${reason}`);
      sender.abort.abort(new Error(reason));
      this.channel.send({ type: 'backup_failed', backupId, reason });
    } finally {
      clearTimeout(timer);
      if (this.senders.get(backupId) === sender) this.senders.delete(backupId);
    }
  }
}
