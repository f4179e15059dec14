import type { DomainEvent } from './envelope';
import { ApiError } from './errors';
import type { CloudTransfer, RcloneRequest } from './sync';

/**
 * `vastai cloud copy`'s body (POST /api/v0/commands/rclone/): `{src, dst, instance_id, selected, transfer,
 * flags}`, ids as strings. Read by sync-maintenance's route and, when the call is scheduled, by
 * instance-lifecycle (which stores scheduled calls) to refuse a bad body when it is stored, not at each run.
 */
export interface CloudCopyCall {
  instanceId: number;
  srcPath: string;
  dstPath: string;
  rclone: RcloneRequest;
}

export const CLOUD_TRANSFERS: readonly CloudTransfer[] = ['Instance To Cloud', 'Cloud To Instance'];
const MAX_PATH_CHARS = 4096;
const MAX_FLAGS = 16;

/** An instance id as an integer or a string of digits; anything else is refused with `error`/`msg`. */
export function instanceIdOf(raw: unknown, error: string, msg: string): number {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new ApiError(400, error, msg);
  return Number(text);
}

/** A non-empty path of at most 4,096 characters, without NUL. */
export function requiredPath(raw: unknown, name: string): string {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new ApiError(400, 'invalid_args', `${name} must be a path`);
  if (raw.includes('\0') || raw.length > MAX_PATH_CHARS)
    throw new ApiError(400, 'invalid_args', `invalid ${name}`);
  return raw.trim();
}

/** The CLI's `--transfer` in any case (its default is "Instance to Cloud"), as one of CLOUD_TRANSFERS. */
function transferOf(raw: unknown): CloudTransfer {
  const wanted = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  const transfer = CLOUD_TRANSFERS.find((t) => t.toLowerCase() === wanted);
  if (!transfer)
    throw new ApiError(400, 'invalid_args', `transfer must be one of: ${CLOUD_TRANSFERS.join(', ')}`);
  return transfer;
}

export function parseCloudCopyCall(body: Record<string, unknown>): CloudCopyCall {
  const instanceId = instanceIdOf(body.instance_id, 'invalid_args', 'invalid instance_id');
  const transfer = transferOf(body.transfer);
  const connection =
    typeof body.selected === 'number' || typeof body.selected === 'string' ? String(body.selected) : '';
  if (connection === '' || connection.length > 20)
    throw new ApiError(400, 'invalid_args', 'selected (the cloud connection id) is required');
  const flags = Array.isArray(body.flags)
    ? body.flags.filter((f): f is string => typeof f === 'string' && f.length <= 64)
    : [];
  if (flags.length > MAX_FLAGS) throw new ApiError(400, 'invalid_args', `at most ${MAX_FLAGS} flags`);
  return {
    instanceId,
    srcPath: requiredPath(body.src, 'src'),
    dstPath: requiredPath(body.dst, 'dst'),
    rclone: { connection, transfer, flags },
  };
}

/**
 * `scheduledcall-<jobId>-<due time in ms>`: a scheduled job of instance-lifecycle's came due for a call another
 * context serves (today `cloud copy`, sync-maintenance's). One stream per run, so a retried run adds nothing.
 * sync-maintenance starts the copy as `userId`, with the same checks as its route (the instance and the
 * connection must still be the user's).
 */
export type ScheduledCloudCopyDue = DomainEvent<
  'ScheduledCloudCopyDue',
  { jobId: number; userId: number; dueAt: string; call: CloudCopyCall; at: string }
>;

export const ScheduledCallPublicEvents = {
  ScheduledCloudCopyDue: { schemaVersion: 1, streamType: 'scheduledcall' },
} as const;
