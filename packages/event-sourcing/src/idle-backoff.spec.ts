import { idleBackoff } from './idle-backoff';

describe('idle backoff of a poller', () => {
  it('doubles while polls find nothing, up to the maximum, and returns to the base when one finds work', () => {
    const delay = idleBackoff(1000, 8000);
    const seen: number[] = [delay.ms];
    for (const found of [0, 0, 0, 0, 0, 3, 0]) {
      delay.after(found);
      seen.push(delay.ms);
    }
    expect(seen).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 1000, 2000]);
  });

  it('stays fixed without a maximum', () => {
    const delay = idleBackoff(250);
    delay.after(0);
    delay.after(0);
    expect(delay.ms).toBe(250);
  });
});
