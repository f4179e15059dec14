import { type SyncNotice, syncStatusMsg } from './sync-maintenance-notices';

const copy: SyncNotice = {
  jobId: 3,
  kind: 'copy_direct',
  srcInstanceId: 5,
  transfer: null,
  status: 'running',
  bytesCopied: 8_400_000,
  totalBytes: 21_000_000,
  reason: null,
};

describe('the status bar line of a remote sync', () => {
  it('shows progress with a percentage when the size is known, bytes only otherwise', () => {
    expect(syncStatusMsg(copy)).toBe('Remote copy from instance 5: 8.4 MB of 21.0 MB (40%)');
    expect(syncStatusMsg({ ...copy, totalBytes: null })).toBe('Remote copy from instance 5: 8.4 MB copied');
    expect(syncStatusMsg({ ...copy, bytesCopied: 22_000_000 })).toContain('(100%)');
  });

  it('says queued, complete, failed (with the reason) and canceled (no resume)', () => {
    expect(syncStatusMsg({ ...copy, status: 'requested' })).toBe('Remote copy from instance 5: queued');
    expect(syncStatusMsg({ ...copy, status: 'completed', bytesCopied: 21_000_000 })).toBe(
      'Remote copy from instance 5: complete, 21.0 MB copied',
    );
    expect(syncStatusMsg({ ...copy, status: 'failed', reason: 'no container' })).toBe(
      'Remote copy from instance 5 failed: no container',
    );
    expect(syncStatusMsg({ ...copy, status: 'canceled' })).toMatch(
      /canceled at 8\.4 MB; a canceled copy does not resume/,
    );
  });

  it('names a cloud copy by its direction', () => {
    expect(
      syncStatusMsg({
        ...copy,
        kind: 'rclone',
        srcInstanceId: null,
        transfer: 'Cloud To Instance',
        status: 'requested',
      }),
    ).toBe('Cloud copy (Cloud To Instance): queued');
    expect(
      syncStatusMsg({
        ...copy,
        kind: 'rclone',
        srcInstanceId: null,
        transfer: 'Instance To Cloud',
        status: 'completed',
        bytesCopied: 2_000_000,
      }),
    ).toBe('Cloud Copy Operation Finished: Cloud copy (Instance To Cloud), 2.0 MB copied');
  });
});
