/**
 * V8 settings of the embedded process, for its memory (measured in docs/benchmarks.md, "V8 settings of the
 * embedded process"):
 * - `--semi-space-growth-factor=1`: the young generation keeps its first size (two 1 MB semi-spaces, where V8
 *   grows them to 16 MB each, 32 MB resident, within the first seconds of a start);
 * - `--heap-growing-percent=20`: after a full collection the old generation may grow by 20% before the next
 *   (V8 picks up to 300% by its collection speed: ~105 MB held for ~60 MB live after renting and polling);
 * - `--liftoff-only`: PGlite's WebAssembly (PostgreSQL) runs on V8's baseline compiler only. The optimising
 *   compiler's work on PostgreSQL's large functions takes 45-70 MB of malloc'd memory that the process keeps
 *   afterwards; its code is faster on long scans and aggregates (20-40% less CPU), not on the platform's short
 *   statements;
 * - `--compact-on-every-full-gc`: every full collection moves live objects out of sparse pages and frees them.
 *   V8 compacts only pages it finds fragmented enough, so the old generation kept the pages of its largest size
 *   under load (~65 MB for ~45 MB live after renting and polling) until a memory-reducing collection long after.
 *   With it the old generation is at most the growth above its live size.
 * `./v8-settings` sets them at run time, first thing in the process, so that every way of starting it gets them (`npm
 * start`, `node apps/platform/dist/main.js`, the bench, the e2e suites): V8 reads them when it grows a space or
 * compiles a WebAssembly module, which has not happened yet. `RIGMARKET_V8_FLAGS` replaces them (empty: V8's
 * defaults); each entry is a V8 flag (`node --v8-options`).
 */
export const EMBEDDED_V8_FLAGS: readonly string[] = [
  '--semi-space-growth-factor=1',
  '--heap-growing-percent=20',
  '--liftoff-only',
  '--compact-on-every-full-gc',
];

/** The V8 flags an embedded process applies: `RIGMARKET_V8_FLAGS` (space-separated) when set, else the defaults. */
export function embeddedV8Flags(env: NodeJS.ProcessEnv): readonly string[] {
  const given = env.RIGMARKET_V8_FLAGS;
  if (given === undefined) return EMBEDDED_V8_FLAGS;
  const flags = given.split(/\s+/).filter((flag) => flag !== '');
  const bad = flags.find((flag) => !/^--[a-z0-9-]+(=[\w.-]+)?$/.test(flag));
  if (bad !== undefined)
    throw new Error(`RIGMARKET_V8_FLAGS: "${bad}" is not a V8 flag (--name or --name=value)`);
  return flags;
}
