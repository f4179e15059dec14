import type { InstanceConfig, InstanceIntendedStatus } from '@rigmarket/contracts';

/** What a host needs to run an instance. */
export interface ProvisionSpec {
  instanceId: number;
  machineId: number;
  publicIpaddr: string | null;
  config: InstanceConfig;
  targetState: InstanceIntendedStatus;
  /** Injected into the container as CONTAINER_API_KEY. */
  instanceApiKey: string;
  /** The OpenSSH public key lines for the container's /root/.ssh/authorized_keys. */
  authorizedKeys: string[];
}

/**
 * The seam between instance-lifecycle and the hosts. Its commands are called only by the
 * HostCommandDispatcher, from host_commands rows (ADR 0012). Commands are fire-and-forget: the host reports
 * each real transition back (HostReporter -> ReportHostState on the instance stream). The simulated
 * driver comes first; a Docker driver (dockerode, through the host agent) implements the same interface.
 */
export interface HostDriver {
  provision(spec: ProvisionSpec): void;
  /** statusMsg: why, when the renter did not ask (e.g. outbid). */
  stop(instanceId: number, statusMsg?: string): void;
  start(instanceId: number): void;
  /** Restart the container (loading -> running). */
  reboot(instanceId: number): void;
  /** Recreate the container from a fresh pull, keeping the GPUs (loading -> running). */
  recycle(instanceId: number): void;
  destroy(instanceId: number): void;
  /** Recreate the container from a changed config (`vastai update instance`), keeping GPUs, volume and key. */
  update(spec: ProvisionSpec): void;
  /** The instance's authorized keys changed: the whole list (written over the container's file). */
  setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): void;
  /** Why the machine's host cannot start an instance right now (e.g. its agent is not connected), or null. */
  unavailableReason(machineId: number): Promise<string | null>;
  /** The container's output (or, with daemon, the host daemon's lines about this instance), oldest first. */
  logs(instanceId: number, daemon: boolean): Promise<string[]>;
  /** `vastai execute`: argv (parseExecCommand's) run in the instance's container; its bounded output. */
  execute(instanceId: number, argv: string[]): Promise<string>;
}
