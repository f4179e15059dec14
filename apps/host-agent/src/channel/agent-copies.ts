import type { Writable } from 'node:stream';
import {
  type AgentToLifecycle,
  type CopyEndpoint,
  type LifecycleToAgent,
  encodeCopyData,
} from '@rigmarket/contracts';
import type { AgentDriver } from '../drivers/agent-driver';
import { type Window, acknowledge, closeWindow, openWindow, sendThrottled } from './windowed-send';

type CopyCommand = Extract<LifecycleToAgent, { type: `copy_${string}` }>;

export interface CopyChannel {
  /** A JSON message up the channel (dropped while disconnected: instance-lifecycle fails the copy then). */
  send(message: AgentToLifecycle): void;
  /** A binary frame up the channel; rejects when the channel is not open. */
  sendBinary(frame: Buffer): Promise<void>;
  log(line: string): void;
}

interface Receiver {
  abort: AbortController;
  sink: Writable | null;
  done: Promise<void> | null;
  written: number;
}

const reasonOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 300);

/**
 * The host agent's side of copies between instances (docs/adr/0011-agent-copies.md) and of volume clones
 * (a whole volume instead of an instance's path). As the source it reads a tar of the path from its driver, through a throttle, and sends it up in binary frames, never more than
 * COPY_WINDOW_BYTES beyond what the destination acknowledged. As the destination it extracts what arrives
 * into the container and acknowledges each chunk once the extract has taken it (the backpressure), then
 * reports done or failed. An abort (cancel, or the other side failed) stops both at once.
 */
export class AgentCopies {
  private readonly senders = new Map<number, Window>();
  private readonly receivers = new Map<number, Receiver>();

  constructor(
    private readonly driver: AgentDriver,
    private readonly channel: CopyChannel,
  ) {}

  handle(command: CopyCommand): void {
    switch (command.type) {
      case 'copy_receive':
        void this.receive(command.jobId, command);
        return;
      case 'copy_send':
        void this.sendTar(command.jobId, command, command.bytesPerSecond);
        return;
      case 'copy_ack': {
        const sender = this.senders.get(command.jobId);
        if (sender) acknowledge(sender, command.bytes);
        return;
      }
      case 'copy_end':
        void this.finish(command.jobId);
        return;
      case 'copy_abort':
        this.abort(command.jobId, command.reason);
        return;
    }
  }

  /** A data frame for a job this agent extracts. */
  data(jobId: number, bytes: Buffer): void {
    const receiver = this.receivers.get(jobId);
    if (!receiver?.sink) return;
    receiver.sink.write(bytes, (error) => {
      if (error || this.receivers.get(jobId) !== receiver) return;
      receiver.written += bytes.length;
      this.channel.send({ type: 'copy_ack', jobId, bytes: receiver.written });
    });
  }

  /** The channel closed: instance-lifecycle fails every transfer of this machine, so stop them all. */
  abortAll(reason: string): void {
    for (const jobId of [...this.senders.keys(), ...this.receivers.keys()]) this.abort(jobId, reason);
  }

  private abort(jobId: number, reason: string): void {
    const sender = this.senders.get(jobId);
    if (sender) {
      this.senders.delete(jobId);
      closeWindow(sender, reason);
    }
    const receiver = this.receivers.get(jobId);
    if (receiver) {
      this.receivers.delete(jobId);
      receiver.abort.abort(new Error(reason));
      receiver.sink?.destroy();
    }
    if (sender || receiver) this.channel.log(`copy job ${jobId} stopped: ${reason}`);
  }

  private failed(jobId: number, error: unknown): void {
    this.channel.send({ type: 'copy_failed', jobId, reason: reasonOf(error) });
  }

  private async receive(jobId: number, into: CopyEndpoint): Promise<void> {
    const receiver: Receiver = { abort: new AbortController(), sink: null, done: null, written: 0 };
    this.receivers.set(jobId, receiver);
    const signal = receiver.abort.signal;
    try {
      const { sink, done } =
        'volumeId' in into
          ? await this.driver.writeVolumeArchive(into.volumeId, signal)
          : await this.driver.writeArchive(into.instanceId, into.path, signal);
      receiver.sink = sink;
      receiver.done = done;
      sink.on('error', () => undefined);
      done.catch((error: unknown) => {
        if (this.receivers.get(jobId) !== receiver) return;
        this.receivers.delete(jobId);
        sink.destroy();
        this.failed(jobId, error);
      });
      if (receiver.abort.signal.aborted) {
        sink.destroy();
        return;
      }
      this.channel.send({ type: 'copy_ready', jobId });
    } catch (error) {
      if (this.receivers.get(jobId) !== receiver) return;
      this.receivers.delete(jobId);
      this.failed(jobId, error);
    }
  }

  private async finish(jobId: number): Promise<void> {
    const receiver = this.receivers.get(jobId);
    if (!receiver?.sink || !receiver.done) return;
    receiver.sink.end();
    try {
      await receiver.done;
    } catch {
      return; // reported by the done handler
    }
    if (this.receivers.get(jobId) !== receiver) return;
    this.receivers.delete(jobId);
    this.channel.send({ type: 'copy_done', jobId, bytes: receiver.written });
  }

  private async sendTar(jobId: number, from: CopyEndpoint, bytesPerSecond: number): Promise<void> {
    const sender = openWindow();
    this.senders.set(jobId, sender);
    const signal = sender.abort.signal;
    try {
      const { tar, totalBytes } =
        'volumeId' in from
          ? { ...(await this.driver.readVolumeArchive(from.volumeId, signal)), totalBytes: null }
          : await this.driver.readArchive(from.instanceId, from.path, signal);
      if (signal.aborted) throw signal.reason;
      this.channel.send({ type: 'copy_source', jobId, totalBytes });
      const sent = await sendThrottled(
        tar,
        bytesPerSecond,
        sender,
        (piece) => encodeCopyData(jobId, piece),
        (frame) => this.channel.sendBinary(frame),
      );
      this.channel.send({ type: 'copy_sent', jobId, bytes: sent });
    } catch (error) {
      if (!signal.aborted) this.failed(jobId, error);
    } finally {
      if (this.senders.get(jobId) === sender) this.senders.delete(jobId);
    }
  }
}
