import type { EnvVarBox } from '../env-vars/env-var-box';

/** What rclone needs to sign requests to an S3-compatible endpoint. */
export interface CloudCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Credentials are sealed with the box that seals environment variable values (the same key, derived per
 * account and name) under the name `cloud-connection:<id>`, which no environment variable can have (env
 * var names are letters, digits and _): a sealed blob copied to another account or connection does not open.
 */
const sealName = (connectionId: number) => `cloud-connection:${connectionId}`;

export function sealCredentials(
  box: EnvVarBox,
  userId: number,
  connectionId: number,
  credentials: CloudCredentials,
): string {
  return box.seal(JSON.stringify(credentials), userId, sealName(connectionId));
}

/** null when the blob does not open (another seal key, account or connection) or is not credentials. */
export function openCredentials(
  box: EnvVarBox,
  userId: number,
  connectionId: number,
  sealed: string,
): CloudCredentials | null {
  const plain = box.open(sealed, userId, sealName(connectionId));
  if (plain === null) return null;
  try {
    const value = JSON.parse(plain) as Partial<CloudCredentials>;
    return typeof value.accessKeyId === 'string' && typeof value.secretAccessKey === 'string'
      ? { accessKeyId: value.accessKeyId, secretAccessKey: value.secretAccessKey }
      : null;
  } catch {
    return null;
  }
}
