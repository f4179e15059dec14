import { sharedWhileRunning } from './health';

describe('the readiness check under a burst of probes', () => {
  it('given 10 probes while one check runs, then the check runs once and all 10 get its answer', async () => {
    let runs = 0;
    let finish: (ok: boolean) => void = () => undefined;
    const check = sharedWhileRunning(() => {
      runs += 1;
      return new Promise<void>((resolve, reject) => {
        finish = (ok) => (ok ? resolve() : reject(new Error('a projection is behind')));
      });
    });
    const probes = Array.from({ length: 10 }, () => check());
    finish(false);
    const answers = await Promise.allSettled(probes);
    expect(runs).toBe(1);
    expect(answers.every((a) => a.status === 'rejected')).toBe(true);
  });

  it('given a check that has ended, then the next probe runs it again (no answer is kept)', async () => {
    let runs = 0;
    const check = sharedWhileRunning(async () => {
      runs += 1;
    });
    await check();
    await check();
    expect(runs).toBe(2);
  });
});
