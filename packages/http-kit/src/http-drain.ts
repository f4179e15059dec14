/**
 * Long-lived responses (Server-Sent Events) end themselves when the process starts to stop: servePlatform
 * calls `httpDraining()` before it stops accepting connections, so such a response does not hold the drain
 * until its connection is cut (bootstrap.ts).
 */
const listeners = new Set<() => void>();

/** Runs `listener` when HTTP starts draining; returns the function that removes it. */
export function onHttpDrain(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener that HTTP drains now (each at most once). */
export function httpDraining(): void {
  const now = [...listeners];
  listeners.clear();
  for (const listener of now) {
    try {
      listener();
    } catch {
      // a listener's failure must not stop the drain
    }
  }
}
