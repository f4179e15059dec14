import { ApiError } from '@rigmarket/contracts';
import type { Caller } from '@rigmarket/http-kit';
import { INSTANCE_KEY_FORBIDDEN } from './instance-key.strategy';

/** Path and body ids of the instance routes, checked once for every controller. */
export function positiveId(raw: unknown, what: string): number {
  const id = Number(raw);
  if (raw === '' || raw === null || !Number.isInteger(id) || id < 1)
    throw ApiError.badRequest(`${what} must be a positive integer id`, { error: 'invalid_id' });
  return id;
}

export function idList(raw: unknown[] | undefined, name: string): number[] {
  if (!raw || raw.length === 0) throw ApiError.badRequest(`${name} must be a non-empty list of instance ids`);
  return raw.map((v) => positiveId(v, name));
}

/** An instance key opens one instance only. */
export function checkInstanceKey(caller: Caller, instanceId: number): void {
  if (caller.instanceId !== undefined && caller.instanceId !== instanceId)
    throw ApiError.forbidden(INSTANCE_KEY_FORBIDDEN);
}
