import 'reflect-metadata';
import { runStandalone } from '@rigmarket/http-kit';
import { InstanceLifecycleModule } from './instance-lifecycle.module';

/** Distributed mode: instance-lifecycle alone. */
void runStandalone('instance-lifecycle', 8083, [InstanceLifecycleModule.forRoot()]);
