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
  /** The instance a call names when its path does not (the body checked as its route checks it). */
  instanceIdInBody?: (body: Record<string, unknown>) => number;
  /** What a run that went through says (default: done). */
  outcome?: string;
  /** The command the call runs (the body checked as the route checks it: 400 otherwise). */
  command(
    ownerId: number,
    instanceId: number,
    body: Record<string, unknown>,
    metadata: EventMetadata,
    run: ScheduledRunRef,
  ): Command<unknown>;
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
    command: (owner, id, _body, metadata) => new RestartInstanceCommand(owner, id, false, metadata),
  },
  {
    name: 'change bid',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/bid_price\/(\d{1,10})\/?$/,
    command: (owner, id, body, metadata) => new ChangeBidCommand(owner, id, positivePrice(body), metadata),
  },
  {
    name: 'execute',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/command\/(\d{1,10})\/?$/,
    command: (owner, id, body) => new ExecuteCommand(owner, id, allowedCommand(body)),
  },
  {
    name: 'cloud copy',
    method: 'POST',
    path: /^\/api\/v0\/commands\/rclone\/?$/,
    instanceIdInBody: (body) => parseCloudCopyCall(body).instanceId,
    outcome: "copy requested; its outcome appears in the instance's status_msg",
    command: (owner, _id, body, metadata, run) =>
      new HandOffCloudCopyCommand(owner, parseCloudCopyCall(body), run, metadata),
  },
];

/**
 * The allowed route a stored call names, with its instance id; undefined for any other call. A body that
 * its route would refuse throws that route's 400.
 */
export function schedulableRoute(
  method: string,
  endpoint: string,
  body: Record<string, unknown>,
): { route: SchedulableRoute; instanceId: number } | undefined {
  for (const route of SCHEDULABLE_ROUTES) {
    const match = route.method === method.toUpperCase() ? route.path.exec(endpoint) : null;
    if (!match) continue;
    const instanceId = route.instanceIdInBody ? route.instanceIdInBody(body) : Number(match[1]);
    // instance ids are PostgreSQL integers: a longer number names no instance
    if (instanceId <= 2_147_483_647) return { route, instanceId };
  }
  return undefined;
}
