import type { Readable, Writable } from 'node:stream';
import type { AgentHostReport, AgentProvisionSpec, AgentSnapshotRequest } from '@rigmarket/contracts';

export type ReportTransition = (instanceId: number, report: AgentHostReport) => void;

/** A container runtime as the agent drives it. Every transition is reported through `watch`'s callback. */
export interface AgentDriver {
  readonly name: 'docker' | 'simulated';
  /** Starts observing the runtime; reports go to `report` from now on. */
  watch(report: ReportTransition): Promise<void>;
  provision(spec: AgentProvisionSpec): Promise<void>;
  start(instanceId: number): Promise<void>;
  stop(instanceId: number, statusMsg?: string): Promise<void>;
  reboot(instanceId: number): Promise<void>;
  recycle(instanceId: number): Promise<void>;
  /**
   * `vastai update instance`: recreates the container from spec (its new image, env, onstart, args), keeping
   * its GPUs, volume mounts and instance key (spec.instanceApiKey is empty); started when spec says running.
   */
  update(spec: AgentProvisionSpec): Promise<void>;
  destroy(instanceId: number): Promise<void>;
  /**
   * The instance's authorized keys (whole list): written to /root/.ssh/authorized_keys in its container now
   * when it runs, and again at each start of the container (a recycled one is a fresh container).
   */
  setAuthorizedKeys(instanceId: number, authorizedKeys: string[]): Promise<void>;
  /**
   * Brings an instance the host has to its desired state (sent at every connect, ADR 0012): starts or
   * stops it, or reports the state it is in when it already matches. Nothing when the host has no
   * container for it (its provision is still to come).
   */
  converge(instanceId: number, desired: 'running' | 'stopped'): Promise<void>;
  /** Removes what the host still runs for instances that are no longer live (destroyed while the agent was away). */
  forgetAllBut(liveInstanceIds: number[]): Promise<void>;
  /** The container's output, or the agent's own lines about this instance (daemon). */
  logs(instanceId: number, daemon: boolean): Promise<string[]>;
  /** `vastai execute`: argv run in the instance's running container (container-exec.ts), its bounded output. */
  exec(instanceId: number, argv: string[]): Promise<string>;
  /**
   * Copies (copy_direct between instances): a tar of `path` in the instance's container, and its size when
   * it is a file. Rejects with a message for the renter when the container or the path is missing.
   */
  readArchive(
    instanceId: number,
    path: string,
    signal: AbortSignal,
  ): Promise<{ tar: Readable; totalBytes: number | null }>;
  /**
   * Prepares an extract into the directory `path` of the instance's container (created if missing): the tar
   * written to `sink` is extracted there; `done` settles when the extract has finished or failed.
   */
  writeArchive(
    instanceId: number,
    path: string,
    signal: AbortSignal,
  ): Promise<{ sink: Writable; done: Promise<void> }>;
  /**
   * `clone volume`: a tar of the whole of the volume's data on this host (empty when nothing was ever
   * written to it). Rejects with a message for the renter.
   */
  readVolumeArchive(volumeId: number, signal: AbortSignal): Promise<{ tar: Readable }>;
  /** `clone volume`: an extract of the tar written to `sink` into the volume (made if missing), as writeArchive. */
  writeVolumeArchive(volumeId: number, signal: AbortSignal): Promise<{ sink: Writable; done: Promise<void> }>;
  /**
   * Instance backups: a tar of what the instance's container changed on top of its image (files and folders
   * added or modified, deletions left out), each entry under `upper/`. Rejects with a message for the renter
   * when there is no container.
   */
  backupArchive(instanceId: number, signal: AbortSignal): Promise<Readable>;
  /**
   * `take snapshot`: commits the instance's container (paused while it commits when asked), pushes it as
   * `request.image` with `request.auth`, and resolves with the pushed manifest's digest; rejects with a
   * message for the renter. Gives up at `request.timeLimitMs`, or when `signal` aborts. Never logs the login.
   */
  snapshot(request: AgentSnapshotRequest, signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export const STOPPED_MSG = 'Stopped: compute billing halted, disk storage still billed';

/** The agent's own lines about each instance (daemon_logs), newest kept, also echoed to its log. */
export class DaemonLog {
  private readonly lines = new Map<number, string[]>();

  constructor(
    private readonly echo: (line: string) => void = () => undefined,
    private readonly keep = 2_000,
  ) {}

  line(instanceId: number, text: string): void {
    const line = `[rigmarket-agent] instance ${instanceId}: ${text}`;
    const entry = `${new Date().toISOString()} ${line}`;
    const list = this.lines.get(instanceId) ?? [];
    list.push(entry);
    if (list.length > this.keep) list.splice(0, list.length - this.keep);
    this.lines.set(instanceId, list);
    this.echo(line);
  }

  of(instanceId: number): string[] {
    return [...(this.lines.get(instanceId) ?? [])];
  }
}
