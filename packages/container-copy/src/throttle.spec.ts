import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { archiveSourcePath } from './archive';
import { ThrottleStream } from './throttle';

const sink = (received: { bytes: number }) =>
  new Writable({
    write(chunk: Buffer, _encoding, callback) {
      received.bytes += chunk.length;
      callback();
    },
  });

describe('the copy throttle', () => {
  it('passes every byte at no more than the rate, counting them', async () => {
    const counts: number[] = [];
    const throttle = new ThrottleStream(1_000_000, (n) => counts.push(n));
    const received = { bytes: 0 };
    const started = Date.now();
    await pipeline(Readable.from([Buffer.alloc(250_000), Buffer.alloc(250_000)]), throttle, sink(received));
    const elapsed = Date.now() - started;
    expect(received.bytes).toBe(500_000);
    expect(throttle.bytesPassed).toBe(500_000);
    // 500 kB at 1 MB/s: about 0.4 s once the first slice is out (slices of 100 kB)
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(counts[counts.length - 1]).toBe(500_000);
    expect(counts.length).toBeGreaterThanOrEqual(5);
  });

  it('stops at once when destroyed (a cancel), with no timer left behind', async () => {
    const throttle = new ThrottleStream(100_000);
    const received = { bytes: 0 };
    const done = pipeline(Readable.from([Buffer.alloc(1_000_000)]), throttle, sink(received));
    await new Promise((r) => setTimeout(r, 250));
    throttle.destroy(new Error('canceled'));
    await expect(done).rejects.toThrow('canceled');
    const atCancel = received.bytes;
    expect(atCancel).toBeLessThan(1_000_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.bytes).toBe(atCancel);
  });
});

describe('source paths', () => {
  it("copies a directory's contents when the path ends in a slash (rsync's convention)", () => {
    expect(archiveSourcePath('/workspace/')).toBe('/workspace/.');
    expect(archiveSourcePath('/workspace')).toBe('/workspace');
    expect(archiveSourcePath('/data/big.bin')).toBe('/data/big.bin');
    expect(archiveSourcePath('/')).toBe('/');
  });
});
