import type { EventEnvelope, InstanceEvent } from '@rigmarket/contracts';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { CREDIT_RELEASED_MSG, OUTBID_MSG } from '../read-models/instances/status-messages';
import { SCHEMA } from '../schema';
import { type InstanceState, instanceDecider } from '../instances/instance.decider';

/**
 * Commands to hosts are derived from the instance stream's events and written to `host_commands` in the
 * transaction that appends them (docs/adr/0012-host-commands.md). HostCommandDispatcher delivers them
 * afterwards, in order, at least once; a process that dies in between delivers them after its restart.
 */
export type HostCommandKind =
  | 'provision'
  | 'start'
  | 'stop'
  | 'reboot'
  | 'recycle'
  | 'destroy'
  | 'ssh_keys'
  | 'snapshot'
  | 'update'
  /** Written with a backup's request (backups/backups.ts), before the instance's destroy. */
  | 'backup';

export interface HostCommand {
  kind: HostCommandKind;
  /** stop: why, when the renter did not ask (outbid, out of credit). */
  statusMsg?: string;
}

export interface HostCommandRow {
  commandId: number;
  instanceId: number;
  machineId: number;
  kind: HostCommandKind;
  statusMsg: string | null;
  /** provision only: the instance key sealed (PendingKeyBox), cleared once delivered. */
  instanceKeySealed: string | null;
  /** provision and snapshot: the registry login sealed (PendingKeyBox.sealLogin), cleared once delivered. */
  imageLoginSealed: string | null;
  createdAt: Date;
}

/**
 * What the host must be told for these new events of one instance, given the state before them. Pure:
 * the instance stream is the only source of host commands. An instance waiting for its volume has no
 * container yet: its intent changes reach the host with the provision (in the intended state).
 */
export function hostCommandsFor(
  before: InstanceState,
  events: readonly InstanceEvent[],
  stopMsg?: string,
): HostCommand[] {
  const commands: HostCommand[] = [];
  let state = before;
  for (const event of events) {
    const waiting = state.status === 'active' && state.pendingVolume !== null;
    switch (event.type) {
      case 'InstanceCreated':
        if (!event.data.config.newVolume) commands.push({ kind: 'provision' });
        break;
      case 'InstanceVolumeAttached':
        commands.push({ kind: 'provision' });
        break;
      case 'InstanceIntentChanged':
        if (!waiting)
          commands.push(
            event.data.intendedStatus === 'stopped'
              ? { kind: 'stop', ...(stopMsg ? { statusMsg: stopMsg } : {}) }
              : { kind: 'start' },
          );
        break;
      case 'InstanceOutbid':
        if (!waiting)
          commands.push({
            kind: 'stop',
            statusMsg: event.data.reason === 'credit' ? CREDIT_RELEASED_MSG : OUTBID_MSG,
          });
        break;
      case 'InstanceRestarted':
        commands.push({ kind: event.data.recycle ? 'recycle' : 'reboot' });
        break;
      case 'InstanceConfigUpdated':
        // The container is recreated from the config as the read model holds it when delivered. An
        // instance waiting for its volume has none yet: its provision carries the new config.
        if (!waiting) commands.push({ kind: 'update' });
        break;
      case 'InstanceSshKeyAttached':
      case 'InstanceSshKeyDetached':
        // The whole list, as the instance's read model holds it when delivered (a later change wins). An
        // instance waiting for its volume gets its keys with its provision.
        if (!waiting && commands.at(-1)?.kind !== 'ssh_keys') commands.push({ kind: 'ssh_keys' });
        break;
      case 'InstanceSnapshotRequested':
        commands.push({ kind: 'snapshot' });
        break;
      case 'InstanceDestroyed':
        commands.push({ kind: 'destroy' });
        break;
      default:
        break;
    }
    state = instanceDecider.evolve(state, event);
  }
  return commands;
}

export interface HostCommandOptions {
  /** The new instance's key (CreateInstance): sealed into its provision command. */
  sealedInstanceKey?: string;
  /** The new instance's registry login (CreateInstance), or the snapshot's (TakeSnapshot), sealed: never in an event. */
  sealedImageLogin?: string;
  /** The status_msg of a stop the renter did not ask for (e.g. out of credit). */
  stopMsg?: string;
  /**
   * CreateInstance: the new instance's key (instance_keys), written in the statement of its provision command,
   * or, for an instance waiting for its new volume, of its pending provision (the sealed key and login kept
   * for the provision its volume's creation brings): the key exists exactly when the instance does.
   */
  instanceKey?: { hash: string; ownerId: number };
}

/**
 * Writes the host commands of new instance events, in the transaction that appends them; a destroy also
 * deletes the instance's key and pending provision there.
 */
export async function writeHostCommands(
  sql: Sql,
  before: InstanceState,
  envelopes: readonly EventEnvelope[],
  /** The same events as the decider returned them. */
  events: readonly InstanceEvent[],
  options: HostCommandOptions = {},
): Promise<number> {
  const after = events.reduce(instanceDecider.evolve, before);
  if (after.status === 'none') return 0;
  const commands = hostCommandsFor(before, events, options.stopMsg);
  const eventId = envelopes[envelopes.length - 1]?.eventId ?? '';
  // The new instance's key row rides in the statement of its provision (or its pending provision).
  const key = options.instanceKey;
  const keyRow = (hash: number, owner: number) => `key AS (
           INSERT INTO ${SCHEMA}.instance_keys (key_hash, instance_id, owner_id)
           SELECT $${hash}::text, $1, $${owner}::int WHERE $${hash}::text IS NOT NULL)`;
  const sealed = options.sealedInstanceKey ?? null;
  const login = options.sealedImageLogin ?? null;
  if (key && !commands.some((c) => c.kind === 'provision')) {
    // Waiting for its new volume: the key and login wait sealed (PendingKeyBox), never in the clear.
    await sql.execute(
      `WITH ${keyRow(4, 5)}
       INSERT INTO ${SCHEMA}.pending_provisions (instance_id, instance_api_key_sealed, image_login_sealed)
       VALUES ($1, $2, $3)`,
      [after.instanceId, sealed, login, key.hash, key.ownerId],
    );
  }
  for (const command of commands) {
    if (command.kind === 'provision') {
      // A waiting instance's key and registry login move from pending_provisions into its provision command
      // (taken out of it in the same statement).
      await sql.execute(
        `WITH pending AS (
           DELETE FROM ${SCHEMA}.pending_provisions WHERE instance_id = $1
           RETURNING instance_api_key_sealed, image_login_sealed),
         ${keyRow(6, 7)}
         INSERT INTO ${SCHEMA}.host_commands (instance_id, machine_id, kind, instance_key_sealed, image_login_sealed, event_id)
         VALUES ($1, $2, 'provision',
                 COALESCE($3, (SELECT instance_api_key_sealed FROM pending)),
                 COALESCE($5, (SELECT image_login_sealed FROM pending)), $4)`,
        [after.instanceId, after.machineId, sealed, eventId, login, key?.hash ?? null, key?.ownerId ?? null],
      );
    } else {
      // A snapshot's registry login travels sealed in its command only.
      await sql.execute(
        `INSERT INTO ${SCHEMA}.host_commands (instance_id, machine_id, kind, status_msg, event_id, image_login_sealed) VALUES ($1, $2, $3, $4, $5, $6)`,
        [
          after.instanceId,
          after.machineId,
          command.kind,
          command.statusMsg ?? null,
          eventId,
          command.kind === 'snapshot' ? login : null,
        ],
      );
      if (command.kind === 'destroy') {
        // A destroyed instance's key stops working, and a provision it still waited for is dropped.
        await sql.execute(`DELETE FROM ${SCHEMA}.instance_keys WHERE instance_id = $1`, [after.instanceId]);
        await sql.execute(`DELETE FROM ${SCHEMA}.pending_provisions WHERE instance_id = $1`, [
          after.instanceId,
        ]);
      }
    }
  }
  return commands.length;
}

/** The dispatcher of a runtime wakes up after a commit that wrote commands (it also polls). */
const kickers = new WeakMap<ContextRuntime, () => void>();

export function registerDispatcherKick(runtime: ContextRuntime, kick: () => void): void {
  kickers.set(runtime, kick);
}

/** Called after a commit that may have written host commands. */
export function kickAfterCommit(runtime: ContextRuntime): void {
  kickers.get(runtime)?.();
}

export function rowOf(r: {
  command_id: string | number;
  instance_id: number;
  machine_id: number;
  kind: string;
  status_msg: string | null;
  instance_key_sealed: string | null;
  image_login_sealed?: string | null;
  created_at: string | Date;
}): HostCommandRow {
  return {
    commandId: Number(r.command_id),
    instanceId: Number(r.instance_id),
    machineId: Number(r.machine_id),
    kind: r.kind as HostCommandKind,
    statusMsg: r.status_msg,
    instanceKeySealed: r.instance_key_sealed,
    imageLoginSealed: r.image_login_sealed ?? null,
    createdAt: new Date(r.created_at),
  };
}
