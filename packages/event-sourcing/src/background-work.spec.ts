import { BackgroundWork } from './background-work';

describe('background work of a loop', () => {
  it('stop() resolves only after the work in progress settled, and no work starts after it', async () => {
    const work = new BackgroundWork();
    const ended: string[] = [];
    let finish!: () => void;
    const running = work.run(
      () =>
        new Promise<string>((resolve) => {
          finish = () => {
            ended.push('sweep');
            resolve('swept');
          };
        }),
    );
    const failing = work.run(() => Promise.reject(new Error('database away')));
    await expect(failing).rejects.toThrow('database away');
    const stopped = work.stop().then(() => ended.push('stopped'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual([]);
    finish();
    await stopped;
    expect(await running).toBe('swept');
    expect(ended).toEqual(['sweep', 'stopped']);
    let ran = false;
    expect(
      await work.run(async () => {
        ran = true;
        return 1;
      }),
    ).toBeUndefined();
    expect(ran).toBe(false);
    expect(work.isStopped).toBe(true);
  });
});
