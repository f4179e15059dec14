import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { instanceLifecycleContext } from './instance-lifecycle.context';

export const INSTANCE_RUNTIME = Symbol('INSTANCE_RUNTIME');

@Module({})
export class InstanceLifecycleModule {
  static forRoot(): DynamicModule {
    return contextModule({ module: InstanceLifecycleModule, definition: instanceLifecycleContext, runtimeToken: INSTANCE_RUNTIME, appName: 'instance-lifecycle' });
  }
}
