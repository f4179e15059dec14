import { EXEC_MAX_COMMAND_CHARS, EXEC_MAX_OUTPUT_BYTES, parseExecCommand } from './instance-exec';
import { parseAgentMessage } from './agent-channel';

describe('parseExecCommand (vastai execute)', () => {
  it('gives the argv of ls, rm and du with plain options and paths, split on spaces', () => {
    expect(parseExecCommand('ls -l -o -r')).toEqual({ ok: true, argv: ['ls', '-l', '-o', '-r'] });
    expect(parseExecCommand('  rm  -r home/delete_this.txt ')).toEqual({
      ok: true,
      argv: ['rm', '-r', 'home/delete_this.txt'],
    });
    expect(parseExecCommand('du -d2 -h /workspace/model-v1.2_final')).toEqual({
      ok: true,
      argv: ['du', '-d2', '-h', '/workspace/model-v1.2_final'],
    });
  });

  it('refuses other programs, shell syntax, several lines and unbounded input', () => {
    const reason = (command: unknown) => {
      const parsed = parseExecCommand(command);
      return parsed.ok ? null : parsed.reason;
    };
    expect(reason('cat /etc/passwd')).toBe('only ls, rm and du can be executed, not "cat"');
    expect(reason('/bin/ls /')).toContain('only ls, rm and du');
    for (const command of [
      'ls; rm -rf /',
      'ls && rm x',
      'ls | sh',
      'ls $(id)',
      'ls `id`',
      'du > /x',
      'ls < /x',
      "ls '/'",
      'ls "/"',
      'rm *',
      'ls \\x',
      'ls ${HOME}',
    ])
      expect(reason(command)).toMatch(/is not a plain option or path/);
    expect(reason('ls\nrm -rf /')).toMatch(/one line/);
    expect(reason('ls\t/')).toMatch(/one line/);
    expect(reason('')).toMatch(/required/);
    expect(reason(42)).toMatch(/required/);
    expect(reason(`ls ${'a'.repeat(EXEC_MAX_COMMAND_CHARS)}`)).toMatch(/longer than/);
    expect(reason(`ls${' x'.repeat(64)}`)).toMatch(/more than 64 words/);
  });
});

describe('the exec answer of an agent', () => {
  it('is read with its output bounded, and its error when it could not run', () => {
    expect(parseAgentMessage('{"type":"exec","requestId":"r","output":"bin\\netc\\n"}')).toEqual({
      type: 'exec',
      requestId: 'r',
      output: 'bin\netc\n',
    });
    expect(
      parseAgentMessage(
        JSON.stringify({ type: 'exec', requestId: 'r', output: 'x'.repeat(EXEC_MAX_OUTPUT_BYTES + 10) }),
      ),
    ).toMatchObject({ output: 'x'.repeat(EXEC_MAX_OUTPUT_BYTES) });
    expect(parseAgentMessage('{"type":"exec","requestId":"r","output":"","error":"not running"}')).toEqual({
      type: 'exec',
      requestId: 'r',
      output: '',
      error: 'not running',
    });
    expect(parseAgentMessage('{"type":"exec","requestId":"r"}')).toBeNull();
  });
});
