import type { InstanceConfig, InstanceEvent } from '@rigmarket/contracts';
import { instanceConfig } from '@rigmarket/testing';
import type { CreateInstanceData } from '../instance.decider';

/** Events of instance 7 (renter 2, machine 3, 4 GPUs) for the instance decider's specs. */
export const AT = '2026-05-01T12:00:00.000Z';
export const config: InstanceConfig = instanceConfig({ image: 'pytorch/pytorch', env: { TZ: 'UTC' } });
export const data: CreateInstanceData = {
  instanceId: 7,
  renter: 2,
  machineId: 3,
  hostId: 1,
  offerId: 3004,
  numGpus: 4,
  gpuName: 'RTX 4090',
  dphTotal: 2,
  storageDph: 0.5,
  bidPrice: null,
  label: null,
  targetState: 'running',
  config,
  templateId: null,
};
export const created: InstanceEvent = { type: 'InstanceCreated', data: { ...data, createdAt: AT } };
export const state = (
  actualStatus: 'loading' | 'running' | 'stopped' | 'exited' | 'unknown' | 'offline',
): InstanceEvent => ({
  type: 'InstanceStateChanged',
  data: { instanceId: 7, actualStatus, sshHost: null, sshPort: null, ports: {}, statusMsg: null, at: AT },
});
export const billing = (kind: 'compute' | 'storage' | 'none', ratePerHourMicros: number): InstanceEvent => ({
  type: 'InstanceBillingChanged',
  data: { instanceId: 7, renter: 2, hostId: 1, machineId: 3, billing: kind, ratePerHourMicros, at: AT },
});
/** What creation appends: the instance, billed for compute from now on. */
export const opened: InstanceEvent[] = [created, billing('storage', 500_000)];
export const destroyed: InstanceEvent = {
  type: 'InstanceDestroyed',
  data: { instanceId: 7, renter: 2, machineId: 3, numGpus: 4, at: AT },
};
