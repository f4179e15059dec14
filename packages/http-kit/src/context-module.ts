import type { DynamicModule, Provider, Type } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import {
  type ContextDefinition,
  ContextRuntime,
  PLATFORM_INFRA,
  type RuntimeInfra,
} from '@rigmarket/event-sourcing';
import { AuthKeyCache } from './auth-key-cache';
import { AUTH_KEY_LOOKUP, AuthKeyLookup } from './auth.guard';
import { CONTEXT_METADATA } from './metrics';

export interface ContextModuleSpec {
  /** The module class (one per context, so Nest keeps them apart). */
  module: Type<unknown>;
  definition: ContextDefinition;
  /** Token under which the started ContextRuntime is provided. */
  runtimeToken: symbol;
  /** Consumer-group prefix, e.g. the app name. */
  appName: string;
  controllers?: Type<unknown>[];
  providers?: Provider[];
}

/**
 * The wiring every context module shares: CQRS buses, its ContextRuntime started on the process's
 * infra (migrations, relay, subscriptions), and the bearer guard's key lookup on its own schema.
 */
export function contextModule(spec: ContextModuleSpec): DynamicModule {
  // Its routes' requests are counted under its context (metrics.ts).
  Reflect.defineMetadata(CONTEXT_METADATA, spec.definition.context, spec.module);
  return {
    module: spec.module,
    imports: [CqrsModule],
    controllers: spec.controllers ?? [],
    providers: [
      {
        provide: spec.runtimeToken,
        inject: [PLATFORM_INFRA],
        useFactory: (infra: RuntimeInfra) =>
          ContextRuntime.start(spec.definition, { ...infra, groupPrefix: spec.appName }),
      },
      {
        provide: AUTH_KEY_LOOKUP,
        inject: [spec.runtimeToken],
        // Keys found valid are cached, emptied by every change to the key table (auth-key-cache.ts).
        useFactory: (runtime: ContextRuntime) =>
          new AuthKeyLookup(
            runtime.db,
            runtime.schema,
            () => runtime.runner.clock.now(),
            new AuthKeyCache(runtime.db.watchReadModels([`${runtime.schema}.auth_api_keys`])),
          ),
      },
      ...(spec.providers ?? []),
    ],
    exports: [spec.runtimeToken],
  };
}
