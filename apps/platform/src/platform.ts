import type { DynamicModule, INestApplication } from '@nestjs/common';
import { IdentityModule, type IdentityModuleOptions, identityContext } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule, instanceLifecycleContext } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule, type MarketplaceOptions, marketplaceContext } from '@rigmarket/marketplace-api';
import { SyncMaintenanceModule, syncMaintenanceContext } from '@rigmarket/sync-maintenance';
import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { createPlatformApp, type ServeOptions } from '@rigmarket/http-kit';

/** Every context, for operator tools (rebuild, history) that work across them. */
export const ALL_CONTEXTS: ContextDefinition[] = [identityContext, marketplaceContext, instanceLifecycleContext, syncMaintenanceContext];

export function allContextModules(identity: IdentityModuleOptions = {}, marketplace: MarketplaceOptions = {}): DynamicModule[] {
  return [IdentityModule.forRoot(identity), MarketplaceModule.forRoot(marketplace), InstanceLifecycleModule.forRoot(), SyncMaintenanceModule.forRoot()];
}

/** Embedded mode: the four contexts in one process over the adapters given. */
export function createEmbeddedApp(
  options: Omit<ServeOptions, 'modules' | 'port' | 'host'> & { identity?: IdentityModuleOptions; marketplace?: MarketplaceOptions },
): Promise<INestApplication> {
  return createPlatformApp({ ...options, modules: allContextModules(options.identity, options.marketplace) });
}
