import { decodeCopyData, encodeCopyData, parseAgentMessage } from './agent-channel';

describe('agent channel messages from an agent', () => {
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
