import { EMBEDDED_V8_FLAGS, embeddedV8Flags } from './v8-flags';

describe("the embedded process's V8 flags", () => {
  it('are the memory settings unless RIGMARKET_V8_FLAGS is set', () => {
    expect(embeddedV8Flags({})).toEqual(EMBEDDED_V8_FLAGS);
    expect(EMBEDDED_V8_FLAGS).toEqual([
      '--semi-space-growth-factor=1',
      '--heap-growing-percent=20',
      '--liftoff-only',
      '--compact-on-every-full-gc',
    ]);
  });

  it('are replaced by RIGMARKET_V8_FLAGS, space-separated; empty gives V8 its defaults', () => {
    expect(embeddedV8Flags({ RIGMARKET_V8_FLAGS: ' --liftoff-only  --max-lazy ' })).toEqual([
      '--liftoff-only',
      '--max-lazy',
    ]);
    expect(embeddedV8Flags({ RIGMARKET_V8_FLAGS: '' })).toEqual([]);
  });

  it('refuse an entry that is not a flag, naming it', () => {
    expect(() => embeddedV8Flags({ RIGMARKET_V8_FLAGS: '--liftoff-only; rm -rf /' })).toThrow(
      'RIGMARKET_V8_FLAGS: "--liftoff-only;" is not a V8 flag (--name or --name=value)',
    );
  });
});
