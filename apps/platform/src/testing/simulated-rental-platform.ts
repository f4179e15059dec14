import type { Clock } from '@rigmarket/event-sourcing';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule, type InstanceLifecycleOptions } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import { SyncMaintenanceModule, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import { type HarnessMode, type PlatformHarness, eventually, startPlatform } from '@rigmarket/testing';
import request from 'supertest';
import { listVerifiedMachine } from './listed-machine';
import { adminInMarketplace, grantCredit, verifiedUser } from './users';

export interface SimulatedRentalPlatform extends PlatformHarness {
  mailer: RecordingMailer;
  /** A verified account with credit. */
  renterKey: string;
  /** A second verified account with credit, for what one owner must never see of another. */
  otherKey: string;
  /** The admin's machine (HOST_HARDWARE), listed with `vastai list machine`'s ask and verified. */
  machineId: number;
  /** Rents the machine's first offer (busybox) as `key`, once the offer has reached instance-lifecycle: the instance id. */
  rent(key: string): Promise<number>;
}

/**
 * The four contexts in one app (startPlatform, either mode) with simulated hosts and no copy executor (remote
 * syncs fail with a clear message), the admin key known where machines and maintenance windows are served,
 * a renter and another account, both with credit, and the admin's machine listed and verified: what the suites
 * about renters' instances and their machine's maintenance start from.
 */
export async function startSimulatedRentalPlatform(
  mode: HarnessMode,
  options: {
    adminKey: string;
    /** Prefixes of the two accounts' e-mail addresses. */
    users: { renter: string; other: string };
    simulatedHost: InstanceLifecycleOptions['simulatedHost'];
    clock?: Clock;
  },
): Promise<SimulatedRentalPlatform> {
  const mailer = new RecordingMailer();
  // sync-maintenance first, as the embedded platform does (machines/maintenances vs machines/:id)
  const platform = await startPlatform(
    mode,
    [
      IdentityModule.forRoot({ adminKey: options.adminKey, mailer }),
      SyncMaintenanceModule.forRoot({ copyExecutor: new UnavailableCopyExecutor() }),
      MarketplaceModule.forRoot(),
      InstanceLifecycleModule.forRoot({ simulatedHost: options.simulatedHost }),
    ],
    { clock: options.clock },
  );
  try {
    const server = platform.app.getHttpServer();
    const http = () => request(server);
    const as = (key: string) => ({ Authorization: `Bearer ${key}` });
    for (const path of ['/api/v0/machines', '/api/v0/machines/maintenances']) {
      await eventually(
        async () => ((await http().get(path).set(as(options.adminKey))).status === 200 ? true : undefined),
        60_000,
        `the admin key at ${path}`,
      );
    }
    await adminInMarketplace(server, options.adminKey);
    const readyAt = ['/api/v0/instances/', '/api/v0/machines/maintenances'];
    const renterKey = await verifiedUser(server, mailer, options.users.renter, readyAt);
    const otherKey = await verifiedUser(server, mailer, options.users.other, readyAt);
    await grantCredit(server, options.adminKey, renterKey);
    await grantCredit(server, options.adminKey, otherKey);
    const machineId = await listVerifiedMachine(server, options.adminKey);
    const rent = async (key: string): Promise<number> => {
      const res = await eventually(
        async () => {
          const r = await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(as(key))
            .send({ image: 'busybox', disk: 10 });
          return r.status === 200 ? r : undefined;
        },
        60_000,
        'the offer in instance-lifecycle',
      );
      return res.body.new_contract as number;
    };
    return { ...platform, mailer, renterKey, otherKey, machineId, rent };
  } catch (failure) {
    await platform.close();
    throw failure;
  }
}
