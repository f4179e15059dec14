import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { Database } from '@rigmarket/event-sourcing';
import { type HostAgent, dockerFromEnvironment } from '@rigmarket/host-agent';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import type { InstanceLifecycleOptions } from '@rigmarket/instance-lifecycle';
import { rentOnDockerAgent, separateDockerIds } from './docker-agents';
import { startEmbeddedTestApp } from './embedded-test-app';
import { removeMachineContainers } from './machine-containers';
import { grantCredit, verifiedUser } from './users';

export interface RentedDockerPlatform {
  app: INestApplication;
  db: Database;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  hostKey: string;
  renterKey: string;
  /** A third account, for the 404s of another user. */
  otherKey: string;
  machineId: number;
  /** The renter's instance, running on the host's machine. */
  instanceId: number;
  /** Stops the host agent (once: a later call waits for the same stop). */
  stopAgent(): Promise<void>;
  /** Stops the agent, removes its machine's containers, closes the app and the database. */
  close(): Promise<void>;
}

/**
 * The embedded platform in this process (startEmbeddedTestApp: no billing runs, its Docker ids moved apart),
 * three verified accounts (a host, a renter with credit, another), and the renter's instance running on the
 * host's Docker host agent (rentOnDockerAgent): what the suites about one rented container start from.
 */
export async function startRentedDockerPlatform(options: {
  adminKey: string;
  /** Prefixes of the three accounts' e-mail addresses. */
  users: { host: string; renter: string; other: string };
  instances?: InstanceLifecycleOptions;
  /** The agent's state folder: the caller removes it. */
  stateDir: string;
  image: string;
  log: (line: string) => void;
}): Promise<RentedDockerPlatform> {
  const mailer = new RecordingMailer();
  const embedded = await startEmbeddedTestApp({
    identity: { adminKey: options.adminKey, mailer },
    marketplace: { billingIntervalMs: 0 },
    instances: options.instances,
  });
  const { app, db } = embedded;
  let agent: HostAgent | undefined;
  let machineId: number | undefined;
  let agentStopped: Promise<void> | undefined;
  const stopAgent = () => (agentStopped ??= agent?.stop() ?? Promise.resolve());
  const close = async () => {
    await stopAgent();
    if (machineId !== undefined) await removeMachineContainers(dockerFromEnvironment(), machineId);
    await embedded.close();
  };
  try {
    await app.listen(0, '127.0.0.1');
    const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    await separateDockerIds(db);
    const server = app.getHttpServer();
    const hostKey = await verifiedUser(server, mailer, options.users.host);
    const renterKey = await verifiedUser(server, mailer, options.users.renter);
    const otherKey = await verifiedUser(server, mailer, options.users.other);
    await grantCredit(server, options.adminKey, renterKey);
    const rented = await rentOnDockerAgent({
      server,
      baseUrl,
      hostKey,
      renterKey,
      stateDir: options.stateDir,
      image: options.image,
      log: options.log,
    });
    ({ agent, machineId } = rented);
    return {
      app,
      db,
      baseUrl,
      hostKey,
      renterKey,
      otherKey,
      machineId: rented.machineId,
      instanceId: rented.instanceId,
      stopAgent,
      close,
    };
  } catch (failure) {
    await close();
    throw failure;
  }
}
