import { bucketPath } from './cloud-copy-order';

describe("a cloud copy's bucket path", () => {
  it('is bucket[/prefix] without the slashes around it', () => {
    expect(bucketPath('/rig-cloud/backup/')).toBe('rig-cloud/backup');
    expect(bucketPath('rig-cloud')).toBe('rig-cloud');
    expect(bucketPath(' /rig-cloud/a/b ')).toBe('rig-cloud/a/b');
  });

  it('names no bucket when empty or when it climbs with ..', () => {
    expect(bucketPath('/')).toBeNull();
    expect(bucketPath('')).toBeNull();
    expect(bucketPath('/rig-cloud/../other')).toBeNull();
  });
});
