import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { RuntimeInfra } from './context-runtime';

export const PLATFORM_INFRA = Symbol('PLATFORM_INFRA');

/**
 * The storage and transport adapters a process runs with, shared by the context modules it hosts
 * (one in distributed mode, four in embedded mode).
 */
@Global()
@Module({})
export class PlatformInfraModule {
  static forRoot(infra: RuntimeInfra): DynamicModule {
    return {
      module: PlatformInfraModule,
      providers: [{ provide: PLATFORM_INFRA, useValue: infra }],
      exports: [PLATFORM_INFRA],
    };
  }
}
