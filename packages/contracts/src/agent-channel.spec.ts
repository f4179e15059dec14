import { parseAgentMessage } from './agent-channel';

describe('agent channel messages from an agent', () => {
  it('reads hello, heartbeat, report and logs', () => {
    expect(parseAgentMessage('{"type":"hello","version":1,"machineId":7,"driver":"docker"}')).toEqual({ type: 'hello', version: 1, machineId: 7, driver: 'docker' });
    expect(parseAgentMessage('{"type":"heartbeat","machineId":7}')).toEqual({ type: 'heartbeat', machineId: 7 });
    expect(parseAgentMessage('{"type":"report","instanceId":3,"report":{"actualStatus":"running","sshHost":"h","sshPort":40022,"ports":{"22/tcp":40022,"x":"y"}}}')).toEqual({
      type: 'report',
      instanceId: 3,
      report: { actualStatus: 'running', sshHost: 'h', sshPort: 40022, ports: { '22/tcp': 40022 }, statusMsg: null },
    });
    expect(parseAgentMessage('{"type":"logs","requestId":"r","lines":["a",2],"error":"e"}')).toEqual({ type: 'logs', requestId: 'r', lines: ['a', '2'], error: 'e' });
  });

  it('drops what is not a well-formed message', () => {
    expect(parseAgentMessage('not json')).toBeNull();
    expect(parseAgentMessage('[]')).toBeNull();
    expect(parseAgentMessage('{"type":"provision"}')).toBeNull();
    expect(parseAgentMessage('{"type":"hello","version":"1","machineId":7,"driver":"docker"}')).toBeNull();
    expect(parseAgentMessage('{"type":"report","instanceId":3,"report":{"actualStatus":null}}')).toBeNull();
    expect(parseAgentMessage('{"type":"report","instanceId":3,"report":{"actualStatus":"deleted"}}')).toBeNull();
  });
});
