/**
 * A poll delay that doubles from `baseMs` up to `maxMs` while polls find nothing and returns to `baseMs` as
 * soon as one finds work (a fixed delay without `maxMs`).
 */
export function idleBackoff(
  baseMs: number,
  maxMs?: number,
): { readonly ms: number; after(found: number): void } {
  let ms = baseMs;
  return {
    get ms() {
      return ms;
    },
    after(found: number) {
      ms = found > 0 || maxMs === undefined ? baseMs : Math.min(ms * 2, Math.max(maxMs, baseMs));
    },
  };
}
