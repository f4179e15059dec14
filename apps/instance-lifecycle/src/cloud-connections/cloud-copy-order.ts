import { CLOUD_COPY_FLAGS, type CloudCopyOrder, type RcloneRequest } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import type { EnvVarBox } from '../env-vars/env-var-box';
import { findCloudConnection } from '../read-models/cloud-connections/queries';
import { openCredentials } from './cloud-credentials';

/** bucket[/prefix] from the CLI's path (`/bucket/prefix/` or `bucket/prefix`); null when it names no bucket. */
export function bucketPath(raw: string): string | null {
  const path = raw.trim().replace(/^\/+/, '').replace(/\/+$/, '');
  if (path === '' || path.split('/').some((part) => part === '..')) return null;
  return path;
}

/**
 * What the instance's agent runs for a cloud copy (`vastai cloud copy`): the direction, the container path,
 * the bucket path and the owner's connection with its credentials opened; or why it cannot run. Instance To
 * Cloud copies `src` of the container to `dst` on the cloud, Cloud To Instance `src` on the cloud into `dst` of
 * the container. A connection of another account is as unknown as one that does not exist.
 */
export async function cloudCopyOf(
  sql: Sql,
  box: EnvVarBox,
  ownerId: number,
  srcPath: string,
  dstPath: string,
  request: RcloneRequest,
): Promise<{ order: CloudCopyOrder } | { refused: string }> {
  const connectionId = Number(request.connection);
  const connection = Number.isSafeInteger(connectionId)
    ? await findCloudConnection(sql, ownerId, connectionId)
    : null;
  if (!connection)
    return {
      refused: `No cloud connection ${request.connection} on your account (vastai show connections lists them)`,
    };
  const credentials = openCredentials(box, ownerId, connectionId, connection.credentialsSealed);
  if (!credentials)
    return {
      refused: `The credentials of cloud connection ${connectionId} no longer open (the platform's seal key changed); delete the connection and make it again`,
    };
  const toCloud = request.transfer === 'Instance To Cloud';
  const remotePath = bucketPath(toCloud ? dstPath : srcPath);
  if (remotePath === null)
    return {
      refused: `The cloud path ${JSON.stringify(toCloud ? dstPath : srcPath)} names no bucket: give bucket/path`,
    };
  return {
    order: {
      direction: toCloud ? 'to_cloud' : 'from_cloud',
      path: toCloud ? srcPath : dstPath,
      remotePath,
      cloud: { endpoint: connection.endpoint, region: connection.region, ...credentials },
      flags: request.flags.filter((flag) => CLOUD_COPY_FLAGS.includes(flag)),
    },
  };
}
