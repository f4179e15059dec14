import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ThrottleStream } from '@rigmarket/container-copy';
import { COPY_MAX_CHUNK_BYTES, COPY_WINDOW_BYTES } from '@rigmarket/contracts';

/** A transfer up the channel: how far the other end acknowledged, and its abort. */
export interface Window {
  abort: AbortController;
  acked: number;
  wake: (() => void) | null;
}

export const openWindow = (): Window => ({ abort: new AbortController(), acked: 0, wake: null });

/** The other end acknowledged `bytes` (cumulative): the window slides. */
export function acknowledge(window: Window, bytes: number): void {
  window.acked = Math.max(window.acked, bytes);
  window.wake?.();
}

/** Stops the transfer; a send waiting for the window rejects with `reason`. */
export function closeWindow(window: Window, reason: string): void {
  window.abort.abort(new Error(reason));
  window.wake?.();
}

/**
 * Sends the tar up the channel at most `bytesPerSecond` (sendInWindow through a throttle); resolves with the
 * bytes sent once the tar has ended, rejects when the window closes or the tar fails.
 */
export async function sendThrottled(
  tar: Readable,
  bytesPerSecond: number,
  window: Window,
  frame: (piece: Buffer) => Buffer,
  sendBinary: (frame: Buffer) => Promise<void>,
  onBytes?: (total: number) => void,
): Promise<number> {
  const signal = window.abort.signal;
  const throttle = new ThrottleStream(bytesPerSecond);
  const flowing = pipeline(tar, throttle, { signal });
  flowing.catch(() => undefined);
  const sent = await sendInWindow(throttle as AsyncIterable<Buffer>, window, frame, sendBinary, onBytes);
  await flowing;
  if (signal.aborted) throw signal.reason;
  return sent;
}

/**
 * Sends `source` up the channel in binary frames of at most COPY_MAX_CHUNK_BYTES, never more than
 * COPY_WINDOW_BYTES beyond what the other end acknowledged (the backpressure of copies and backups). Resolves
 * with the bytes sent; rejects when the window is closed or a frame cannot be sent. `onBytes` sees the total
 * before each frame goes out (it may throw to stop the transfer).
 */
export async function sendInWindow(
  source: AsyncIterable<Buffer>,
  window: Window,
  frame: (piece: Buffer) => Buffer,
  sendBinary: (frame: Buffer) => Promise<void>,
  onBytes: (total: number) => void = () => undefined,
): Promise<number> {
  let sent = 0;
  for await (const chunk of source) {
    for (let at = 0; at < chunk.length; at += COPY_MAX_CHUNK_BYTES) {
      const piece = chunk.subarray(at, at + COPY_MAX_CHUNK_BYTES);
      onBytes(sent + piece.length);
      while (sent + piece.length - window.acked > COPY_WINDOW_BYTES) await acknowledged(window);
      await sendBinary(frame(piece));
      sent += piece.length;
    }
  }
  return sent;
}

/** Waits until the other end acknowledges more (or the transfer is aborted). */
function acknowledged(window: Window): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (window.abort.signal.aborted) return reject(window.abort.signal.reason as Error);
    window.wake = () => {
      window.wake = null;
      if (window.abort.signal.aborted) reject(window.abort.signal.reason as Error);
      else resolve();
    };
  });
}
