import type { Command } from '@nestjs/cqrs';
import { ApiError, type EventMetadata, parseCloudCopyCall, parseExecCommand } from '@rigmarket/contracts';
import { ExecuteCommand } from '../logs/execute.handlers';
import { ChangeBidCommand } from '../instances/change-bid/change-bid.command';
import { RestartInstanceCommand } from '../instances/restart-instance/restart-instance.command';
import { HandOffCloudCopyCommand, type ScheduledRunRef } from './scheduled-call';

/**
 * The API calls a scheduled job may repeat: the allow-list. Each names its method and path (and where the
 * instance id is: in the path, or in the body) and turns the stored call into the command its route runs,
 * as the job's owner, through the same command path (CommandBus, deciders, events) as the route itself.
 * `cloud copy`'s route belongs to sync-maintenance: its runs are handed over as public events
 * (scheduled-call.ts). Another route becomes schedulable by adding its entry here.
 */
export interface SchedulableRoute {
  /** What the job does, for its run results. */
  name: string;
  method: 'PUT' | 'POST';
  /** Matches the stored path; its first group, when it has one, is the instance id. */
  path: RegExp;
  /** What a run that went through says (default: done). */
  outcome?: string;
  /**
   * The stored call, its body read once: the instance it names (`pathId`, the path's id, unless the body
   * names it: NaN for a path without one) and the command a run sends. Checks of the body that the instance
   * id does not need run in `command` (400 when its route would refuse the body).
   */
  call(pathId: number, body: Record<string, unknown>): ScheduledCall;
}

/** A stored call found schedulable: the instance it names and the command each of its runs sends. */
export interface ScheduledCall {
  instanceId: number;
  command(ownerId: number, metadata: EventMetadata, run: ScheduledRunRef): Command<unknown>;
}

const positivePrice = (body: Record<string, unknown>): number => {
  const price = Number(body.price);
  if (body.price === null || body.price === undefined || !Number.isFinite(price) || price <= 0)
    throw ApiError.badRequest('price must be a positive bid in $/hour');
  return price;
};

/** `execute`'s command (ls, rm or du with plain words), checked when the job is stored, not only at each run. */
const allowedCommand = (body: Record<string, unknown>): unknown => {
  const parsed = parseExecCommand(body.command);
  if (!parsed.ok) throw new ApiError(400, 'invalid_command', parsed.reason);
  return body.command;
};

export const SCHEDULABLE_ROUTES: readonly SchedulableRoute[] = [
  {
    name: 'reboot instance',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/reboot\/(\d{1,10})\/?$/,
    call: (id) => ({
      instanceId: id,
      command: (owner, metadata) => new RestartInstanceCommand(owner, id, false, metadata),
    }),
  },
  {
    name: 'change bid',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/bid_price\/(\d{1,10})\/?$/,
    call: (id, body) => ({
      instanceId: id,
      command: (owner, metadata) => new ChangeBidCommand(owner, id, positivePrice(body), metadata),
    }),
  },
  {
    name: 'execute',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/command\/(\d{1,10})\/?$/,
    call: (id, body) => ({
      instanceId: id,
      command: (owner) => new ExecuteCommand(owner, id, allowedCommand(body)),
    }),
  },
  {
    name: 'cloud copy',
    method: 'POST',
    path: /^\/api\/v0\/commands\/rclone\/?$/,
    outcome: "copy requested; its outcome appears in the instance's status_msg",
    call: (_id, body) => {
      const call = parseCloudCopyCall(body);
      return {
        instanceId: call.instanceId,
        command: (owner, metadata, run) => new HandOffCloudCopyCommand(owner, call, run, metadata),
      };
    },
  },
];

/**
 * The allowed route a stored call names, with its instance id and the command a run sends; undefined for
 * any other call. A body whose instance id its route would refuse throws that route's 400 here, the body's
 * other checks throw it from `command`.
 */
export function schedulableRoute(
  method: string,
  endpoint: string,
  body: Record<string, unknown>,
): ({ route: SchedulableRoute } & ScheduledCall) | undefined {
  for (const route of SCHEDULABLE_ROUTES) {
    const match = route.method === method.toUpperCase() ? route.path.exec(endpoint) : null;
    if (!match) continue;
    const call = route.call(Number(match[1]), body);
    // instance ids are PostgreSQL integers: a longer number names no instance
    if (call.instanceId <= 2_147_483_647) return { route, ...call };
  }
  return undefined;
}
