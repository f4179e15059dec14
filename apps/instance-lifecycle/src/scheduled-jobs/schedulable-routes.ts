import type { Command } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import { ChangeBidCommand } from '../instances/change-bid/change-bid.command';
import { RestartInstanceCommand } from '../instances/restart-instance/restart-instance.command';

/**
 * The API calls a scheduled job may repeat: the allow-list. Each names its method and path (the instance id
 * in the path) and turns the stored call into the command its route runs, as the job's owner, through the
 * same command path (CommandBus, deciders, events) as the route itself. Another route (the `execute` and
 * `cloud copy` commands accept `--schedule` too) becomes schedulable by adding its entry here.
 */
export interface SchedulableRoute {
  /** What the job does, for its run results. */
  name: string;
  method: 'PUT' | 'POST';
  /** Matches the stored path; its first group is the instance id. */
  path: RegExp;
  /** The command the call runs (the body checked as the route checks it: 400 otherwise). */
  command(
    ownerId: number,
    instanceId: number,
    body: Record<string, unknown>,
    metadata: EventMetadata,
  ): Command<unknown>;
}

const positivePrice = (body: Record<string, unknown>): number => {
  const price = Number(body.price);
  if (body.price === null || body.price === undefined || !Number.isFinite(price) || price <= 0)
    throw ApiError.badRequest('price must be a positive bid in $/hour');
  return price;
};

export const SCHEDULABLE_ROUTES: readonly SchedulableRoute[] = [
  {
    name: 'reboot instance',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/reboot\/(\d{1,9})\/?$/,
    command: (owner, id, _body, metadata) => new RestartInstanceCommand(owner, id, false, metadata),
  },
  {
    name: 'change bid',
    method: 'PUT',
    path: /^\/api\/v0\/instances\/bid_price\/(\d{1,9})\/?$/,
    command: (owner, id, body, metadata) => new ChangeBidCommand(owner, id, positivePrice(body), metadata),
  },
];

/** The allowed route a stored call names, with its instance id; undefined for any other call. */
export function schedulableRoute(
  method: string,
  endpoint: string,
): { route: SchedulableRoute; instanceId: number } | undefined {
  for (const route of SCHEDULABLE_ROUTES) {
    const match = route.method === method.toUpperCase() ? route.path.exec(endpoint) : null;
    if (match) return { route, instanceId: Number(match[1]) };
  }
  return undefined;
}
