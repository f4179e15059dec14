import { Writable } from 'node:stream';
import { operatorOutput } from './operator-output';

/** A stream that keeps what is written; `isTTY` says whether it passes for a terminal. */
function capture(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { isTTY, columns: 100 });
  return { stream, text: () => chunks.join('') };
}

describe('operator output (rigmarket CLI)', () => {
  it('piped: plain lines, a table as tab-separated rows, no bar', () => {
    const { stream, text } = capture(false);
    const out = operatorOutput(stream);
    out.progress.phase('rebuild', 3);
    out.progress.step();
    out.line('rebuilt identity/users: 2 events applied in 5 ms');
    out.table(['context', 'events'], [['identity', 7]]);
    out.close();
    expect(text()).toBe('rebuilt identity/users: 2 events applied in 5 ms\nidentity\t7\n');
  });

  it('on a terminal: a progress bar with the phase, and a boxed table', async () => {
    const { stream, text } = capture(true);
    const out = operatorOutput(stream);
    out.progress.phase('verify', 4);
    out.progress.step(2);
    // cli-progress renders on a timer
    await new Promise((resolve) => setTimeout(resolve, 150));
    out.line('identity/users: equal');
    out.close();
    out.table(['context', 'events'], [['identity', 7]]);
    expect(text()).toMatch(/verify \|[█░]+\| 50% 2\/4/);
    expect(text()).toContain('identity/users: equal\n');
    expect(text()).toMatch(/┌─+┬─+┐[\s\S]*│ identity +│ 7 +│[\s\S]*└─+┴─+┘/);
  });
});
