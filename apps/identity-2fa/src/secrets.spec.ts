import { HashingGate, hashPassword, verifyPassword } from './secrets';

describe('password hashing', () => {
  it('verifies what it hashed, and nothing else', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('wrong', stored)).toBe(false);
    expect(await verifyPassword('x', null)).toBe(false);
  });

  it('runs at most `concurrency` hashes at once, queues a few, and sheds the rest with 503 busy', async () => {
    const gate = new HashingGate(2, 1);
    let running = 0;
    let peak = 0;
    const releases: Array<() => void> = [];
    const work = () =>
      gate.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
      });
    const accepted = [work(), work(), work()];
    await expect(work()).rejects.toMatchObject({ status: 503, code: 'busy', extra: { retry_after: 1 } });
    while (releases.length > 0 || running > 0) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(accepted);
    expect(peak).toBe(2);
  });
});
