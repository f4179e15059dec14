import {
  decodeBackupData,
  decodeCopyData,
  encodeBackupData,
  encodeCopyData,
  parseAgentMessage,
} from './agent-channel';

describe('agent channel messages from an agent', () => {
  it('reads benchmark results, keeping named finite measurements only', () => {
    expect(
      parseAgentMessage(
        JSON.stringify({
          type: 'benchmark',
          machineId: 7,
          results: [
            { type: 'disk_write', value: 812.5 },
            { type: 'Disk Write', value: 1 },
            { type: 'cpu_sha256', value: -1 },
            'x',
            { type: 'cpu_sha256', value: 530 },
          ],
        }),
      ),
    ).toEqual({
      type: 'benchmark',
      machineId: 7,
      results: [
        { type: 'disk_write', value: 812.5 },
        { type: 'cpu_sha256', value: 530 },
      ],
    });
  });

  it('reads GPU samples, keeping only bounded numbers and at most 16 GPUs', () => {
    const gpu = (index: number) => ({
      index,
      name: 'RTX 4090',
      utilization: 87,
      memoryUsedMb: 20112,
      memoryTotalMb: 24564,
      temperatureC: 71,
      powerW: 402.5,
    });
    const parsed = parseAgentMessage(
      JSON.stringify({
        type: 'gpu_metrics',
        machineId: 7,
        gpus: [
          { ...gpu(0), utilization: 400, powerW: 'lots', temperatureC: null },
          { index: -1, name: 'x' },
          ...Array.from({ length: 20 }, (_, i) => gpu(i + 1)),
        ],
      }),
    );
    expect(parsed).toMatchObject({ type: 'gpu_metrics', machineId: 7 });
    const gpus = parsed?.type === 'gpu_metrics' ? parsed.gpus : [];
    expect(gpus).toHaveLength(15);
    expect(gpus[0]).toEqual({ ...gpu(0), utilization: null, powerW: null, temperatureC: null });
    expect(gpus[1]).toEqual(gpu(1));
    expect(parseAgentMessage('{"type":"gpu_metrics","machineId":7,"gpus":{}}')).toBeNull();
  });

  it('reads hello, heartbeat, report and logs', () => {
    expect(parseAgentMessage('{"type":"hello","version":1,"machineId":7,"driver":"docker"}')).toEqual({
      type: 'hello',
      version: 1,
      machineId: 7,
      driver: 'docker',
    });
    expect(parseAgentMessage('{"type":"heartbeat","machineId":7}')).toEqual({
      type: 'heartbeat',
      machineId: 7,
    });
    expect(
      parseAgentMessage(
        '{"type":"report","instanceId":3,"report":{"actualStatus":"running","sshHost":"h","sshPort":40022,"ports":{"22/tcp":40022,"x":"y"}}}',
      ),
    ).toEqual({
      type: 'report',
      instanceId: 3,
      report: {
        actualStatus: 'running',
        sshHost: 'h',
        sshPort: 40022,
        ports: { '22/tcp': 40022 },
        statusMsg: null,
      },
    });
    expect(parseAgentMessage('{"type":"logs","requestId":"r","lines":["a",2],"error":"e"}')).toEqual({
      type: 'logs',
      requestId: 'r',
      lines: ['a', '2'],
      error: 'e',
    });
  });

  it('drops what is not a well-formed message', () => {
    expect(parseAgentMessage('not json')).toBeNull();
    expect(parseAgentMessage('[]')).toBeNull();
    expect(parseAgentMessage('{"type":"provision"}')).toBeNull();
    expect(parseAgentMessage('{"type":"hello","version":"1","machineId":7,"driver":"docker"}')).toBeNull();
    expect(parseAgentMessage('{"type":"report","instanceId":3,"report":{"actualStatus":null}}')).toBeNull();
    expect(
      parseAgentMessage('{"type":"report","instanceId":3,"report":{"actualStatus":"deleted"}}'),
    ).toBeNull();
  });
});

describe('snapshot reports from an agent', () => {
  it('reads a digest or a failure, bounded, and drops a report with neither or without ids', () => {
    expect(
      parseAgentMessage('{"type":"snapshot_report","instanceId":3,"snapshotId":1,"digest":"sha256:ab"}'),
    ).toEqual({ type: 'snapshot_report', instanceId: 3, snapshotId: 1, digest: 'sha256:ab' });
    const failed = parseAgentMessage(
      JSON.stringify({ type: 'snapshot_report', instanceId: 3, snapshotId: 2, error: 'x'.repeat(900) }),
    );
    expect(failed).toEqual({
      type: 'snapshot_report',
      instanceId: 3,
      snapshotId: 2,
      digest: null,
      error: 'x'.repeat(500),
    });
    expect(parseAgentMessage('{"type":"snapshot_report","instanceId":3,"snapshotId":1}')).toBeNull();
    expect(parseAgentMessage('{"type":"snapshot_report","instanceId":3,"digest":"sha256:ab"}')).toBeNull();
  });
});

describe('copy messages from an agent', () => {
  it('reads the source, destination and failure reports of a copy', () => {
    expect(parseAgentMessage('{"type":"copy_ready","jobId":4}')).toEqual({ type: 'copy_ready', jobId: 4 });
    expect(parseAgentMessage('{"type":"copy_source","jobId":4,"totalBytes":1024}')).toEqual({
      type: 'copy_source',
      jobId: 4,
      totalBytes: 1024,
    });
    expect(parseAgentMessage('{"type":"copy_source","jobId":4,"totalBytes":null}')).toEqual({
      type: 'copy_source',
      jobId: 4,
      totalBytes: null,
    });
    expect(parseAgentMessage('{"type":"copy_ack","jobId":4,"bytes":512}')).toEqual({
      type: 'copy_ack',
      jobId: 4,
      bytes: 512,
    });
    expect(parseAgentMessage('{"type":"copy_sent","jobId":4,"bytes":2048}')).toEqual({
      type: 'copy_sent',
      jobId: 4,
      bytes: 2048,
    });
    expect(parseAgentMessage('{"type":"copy_done","jobId":4,"bytes":2048}')).toEqual({
      type: 'copy_done',
      jobId: 4,
      bytes: 2048,
    });
    expect(parseAgentMessage('{"type":"copy_failed","jobId":4,"reason":"no such path"}')).toEqual({
      type: 'copy_failed',
      jobId: 4,
      reason: 'no such path',
    });
  });

  it('drops copy reports with a missing job or a byte count that is not a count', () => {
    expect(parseAgentMessage('{"type":"copy_ready"}')).toBeNull();
    expect(parseAgentMessage('{"type":"copy_ack","jobId":4,"bytes":-1}')).toBeNull();
    expect(parseAgentMessage('{"type":"copy_ack","jobId":4,"bytes":"12"}')).toBeNull();
    expect(parseAgentMessage('{"type":"copy_source","jobId":4}')).toBeNull();
    expect(parseAgentMessage('{"type":"copy_done","jobId":"4","bytes":1}')).toBeNull();
    expect(parseAgentMessage('{"type":"copy_failed","jobId":4}')).toBeNull();
  });
});

describe('copy data frames', () => {
  it('carry the job id and the bytes, and nothing else is taken for one', () => {
    const frame = encodeCopyData(70_000, Buffer.from('tar bytes'));
    expect(decodeCopyData(frame)).toEqual({ jobId: 70_000, data: Buffer.from('tar bytes') });
    expect(decodeCopyData(Buffer.from([0x02, 0, 0, 0, 1, 9]))).toBeNull();
    expect(decodeCopyData(Buffer.from([0x01, 0, 0]))).toBeNull();
  });
});

describe('backups from an agent', () => {
  it('reads the end or the failure of a backup, bounded, and drops one without its id', () => {
    expect(parseAgentMessage('{"type":"backup_sent","backupId":3,"bytes":10240}')).toEqual({
      type: 'backup_sent',
      backupId: 3,
      bytes: 10_240,
    });
    expect(
      parseAgentMessage(JSON.stringify({ type: 'backup_failed', backupId: 3, reason: 'x'.repeat(900) })),
    ).toEqual({
      type: 'backup_failed',
      backupId: 3,
      reason: 'x'.repeat(500),
    });
    expect(parseAgentMessage('{"type":"backup_sent","backupId":3,"bytes":-1}')).toBeNull();
    expect(parseAgentMessage('{"type":"backup_failed","reason":"no container"}')).toBeNull();
  });

  it('sends its data in frames of its own, never taken for a copy', () => {
    const frame = encodeBackupData(12, Buffer.from('tar bytes'));
    expect(decodeBackupData(frame)).toEqual({ backupId: 12, data: Buffer.from('tar bytes') });
    expect(decodeCopyData(frame)).toBeNull();
    expect(decodeBackupData(encodeCopyData(12, Buffer.from('tar bytes')))).toBeNull();
  });
});
