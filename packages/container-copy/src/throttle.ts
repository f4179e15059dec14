import { Transform, type TransformCallback } from 'node:stream';

/**
 * Passes bytes on at no more than `bytesPerSecond` (a host's copy must not eat the instance's network
 * or disk), counting them for progress reports. Big chunks are cut into slices of a tenth of a second
 * so the rate and the count stay smooth. Destroying it (on cancel) stops at once: no timer survives.
 */
export class ThrottleStream extends Transform {
  private passed = 0;
  private readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly bytesPerSecond: number,
    private readonly onBytes: (total: number) => void = () => undefined,
  ) {
    super();
    if (!(bytesPerSecond > 0)) throw new Error('bytesPerSecond must be above 0');
  }

  get bytesPassed(): number {
    return this.passed;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const slice = Math.max(1, Math.floor(this.bytesPerSecond / 10));
    const pieces: Buffer[] = [];
    for (let at = 0; at < chunk.length; at += slice) pieces.push(chunk.subarray(at, at + slice));
    const next = (): void => {
      const piece = pieces.shift();
      if (!piece) return callback();
      this.passed += piece.length;
      this.push(piece);
      this.onBytes(this.passed);
      const due = this.startedAt + (this.passed / this.bytesPerSecond) * 1000;
      this.timer = setTimeout(
        () => {
          this.timer = null;
          next();
        },
        Math.max(0, due - Date.now()),
      );
    };
    next();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    callback(error);
  }
}
