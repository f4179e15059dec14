import { ContextRuntime, Database, systemClock } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';

/** An in-memory PGlite database with the context's tables, host_commands among them. */
export async function contextDatabase(): Promise<Database> {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  // A runtime migrates at start; this one's transport carries nothing.
  const transport = new InProcessTransport();
  await (await ContextRuntime.start(instanceLifecycleContext, { db, transport, clock: systemClock })).stop();
  await transport.close();
  return db;
}
