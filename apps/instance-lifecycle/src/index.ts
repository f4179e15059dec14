export { InstanceLifecycleModule, INSTANCE_RUNTIME } from './instance-lifecycle.module';
export { instanceLifecycleContext } from './instance-lifecycle.context';
