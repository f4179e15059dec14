export { HostAgent, type HostAgentOptions, defaultChannelUrl, dockerFromEnvironment } from './agent';
export { parseAgentArguments } from './cli';
export { INSTANCE_LABEL, MACHINE_LABEL, containerName, containerPlan } from './drivers/container-spec';
