import type { Duplex } from 'node:stream';
import { EXEC_MAX_OUTPUT_BYTES, EXEC_TIMEOUT_MS, parseExecCommand } from '@rigmarket/contracts';
import type Docker from 'dockerode';

export interface ExecLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}

const DEFAULT_LIMITS: ExecLimits = { timeoutMs: EXEC_TIMEOUT_MS, maxOutputBytes: EXEC_MAX_OUTPUT_BYTES };

/**
 * `vastai execute` in a running container: Docker's exec with argv (no shell), working directory `/`,
 * stdout and stderr together in the order they came. The output is cut at maxOutputBytes and the wait at
 * timeoutMs (a note says so at the end); a non-zero exit status is noted too. The agent checks argv again
 * (ls, rm or du with plain words) whatever the platform sent.
 */
export async function execInContainer(
  container: Docker.Container,
  argv: string[],
  limits: ExecLimits = DEFAULT_LIMITS,
): Promise<string> {
  const parsed = parseExecCommand(argv.join(' '));
  if (!parsed.ok) throw new Error(parsed.reason);
  const exec = await container.exec({
    Cmd: parsed.argv,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
    WorkingDir: '/',
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const { output, cut } = await collect(stream, limits);
  let text = output;
  if (cut === 'size') text += `\n[output cut at ${limits.maxOutputBytes} bytes]\n`;
  else if (cut === 'time') text += `\n[stopped waiting after ${limits.timeoutMs / 1000} s]\n`;
  else {
    const { ExitCode } = await exec.inspect();
    if (ExitCode) text += `[exit status ${ExitCode}]\n`;
  }
  return text;
}

/** Reads Docker's multiplexed frames (8-byte header, then the payload) until the end, the size or the time bound. */
function collect(
  stream: Duplex,
  limits: ExecLimits,
): Promise<{ output: string; cut: 'size' | 'time' | null }> {
  return new Promise((resolve, reject) => {
    const payload: Buffer[] = [];
    let bytes = 0;
    let pending = Buffer.alloc(0);
    let settled = false;
    const finish = (cut: 'size' | 'time' | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (cut) stream.destroy();
      resolve({ output: Buffer.concat(payload).toString('utf8'), cut });
    };
    const timer = setTimeout(() => finish('time'), limits.timeoutMs);
    stream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 8) {
        const size = pending.readUInt32BE(4);
        if (pending.length < 8 + size) break;
        const frame = pending.subarray(8, 8 + size);
        pending = pending.subarray(8 + size);
        const room = limits.maxOutputBytes - bytes;
        payload.push(frame.subarray(0, room));
        bytes += Math.min(room, frame.length);
        if (frame.length > room) return finish('size');
      }
    });
    stream.on('end', () => finish(null));
    stream.on('close', () => finish(null));
    stream.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
    });
  });
}
