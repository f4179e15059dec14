import { randomBytes } from 'node:crypto';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import { IdentityModule, type IdentityModuleOptions, identityContext } from '@rigmarket/identity-2fa';
import {
  InstanceLifecycleModule,
  type InstanceLifecycleOptions,
  instanceLifecycleContext,
} from '@rigmarket/instance-lifecycle';
import { MarketplaceModule, type MarketplaceOptions, marketplaceContext } from '@rigmarket/marketplace-api';
import {
  SyncMaintenanceModule,
  type SyncMaintenanceOptions,
  syncMaintenanceContext,
} from '@rigmarket/sync-maintenance';
import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { createPlatformApp, type ServeOptions } from '@rigmarket/http-kit';
import { serveConsole } from './console-site';

/** Every context, for operator tools (rebuild, history) that work across them. */
export const ALL_CONTEXTS: ContextDefinition[] = [
  identityContext,
  marketplaceContext,
  instanceLifecycleContext,
  syncMaintenanceContext,
];

/**
 * sync-maintenance comes before marketplace: its `GET machines/maintenances` must be registered before
 * marketplace's `GET machines/:id`, or Express would hand it to the latter (distributed mode routes by
 * path at the edge instead).
 */
export function allContextModules(
  identity: IdentityModuleOptions = {},
  sync: SyncMaintenanceOptions = {},
  marketplace: MarketplaceOptions = {},
  instances: InstanceLifecycleOptions = {},
): DynamicModule[] {
  // marketplace seals templates' registry passwords, instance-lifecycle opens them: one key for both.
  const registryKey =
    marketplace.registryKey ??
    instances.registryKey ??
    (process.env.RIGMARKET_REGISTRY_KEY || randomBytes(32).toString('hex'));
  return [
    IdentityModule.forRoot(identity),
    SyncMaintenanceModule.forRoot(sync),
    MarketplaceModule.forRoot({ ...marketplace, registryKey }),
    InstanceLifecycleModule.forRoot({ ...instances, registryKey }),
  ];
}

/**
 * How the embedded process polls. Every command hands its events to the relays as it commits, and every
 * delivery drains the reactor queue (in-process transport): polling is only the fallback, so an idle server
 * polls less and less (1 s doubling to 30 s) instead of keeping a core busy with PGlite queries. The process
 * is the only user of its data folder, so leases and claims found at start are a killed life's: taken back.
 */
export const EMBEDDED_POLLING = {
  relay: { pollIntervalMs: 1_000, idlePollMaxMs: 30_000 },
  reactors: { idlePollMaxMs: 30_000 },
  soleProcess: true,
} as const;

/** Embedded mode: the four contexts in one process over the adapters given. */
export function createEmbeddedApp(
  options: Omit<ServeOptions, 'modules' | 'port' | 'host'> & {
    identity?: IdentityModuleOptions;
    sync?: SyncMaintenanceOptions;
    marketplace?: MarketplaceOptions;
    instances?: InstanceLifecycleOptions;
  },
): Promise<INestApplication> {
  return createPlatformApp({
    site: serveConsole,
    ...options,
    modules: allContextModules(options.identity, options.sync, options.marketplace, options.instances),
  });
}
