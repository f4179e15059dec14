import { buffer } from 'node:stream/consumers';
import { DaemonLog } from './agent-driver';
import { SimulatedAgentDriver } from './simulated.driver';

describe("the simulated driver's volumes (clone volume)", () => {
  const driver = () => new SimulatedAgentDriver({ sshHost: '127.0.0.1', daemonLog: new DaemonLog() });

  it('reads an empty tar of a volume nothing was cloned into', async () => {
    const { tar } = await driver().readVolumeArchive(7);
    expect(await buffer(tar)).toEqual(Buffer.alloc(1024));
  });

  it("keeps what a clone extracted into a volume as that volume's data, and gives it back to the next clone", async () => {
    const simulated = driver();
    const { sink, done } = await simulated.writeVolumeArchive(8, new AbortController().signal);
    sink.write(Buffer.from('first-'));
    sink.end(Buffer.from('second'));
    await done;
    expect((await buffer((await simulated.readVolumeArchive(8)).tar)).toString()).toBe('first-second');
    expect(await buffer((await simulated.readVolumeArchive(9)).tar)).toHaveLength(1024);
  });

  it('fails an extract that is aborted before its end, and keeps nothing', async () => {
    const simulated = driver();
    const abort = new AbortController();
    const { sink, done } = await simulated.writeVolumeArchive(10, abort.signal);
    sink.write(Buffer.from('partial'));
    abort.abort();
    sink.destroy();
    await expect(done).rejects.toThrow(/aborted|stopped/);
    expect(await buffer((await simulated.readVolumeArchive(10)).tar)).toHaveLength(1024);
  });
});
