import { DomainError } from './domain-error';

/** The longest key line accepted: an RSA 16384-bit key with a comment fits easily. */
export const MAX_SSH_KEY_LENGTH = 8192;

const KEY_LINE =
  /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) ([A-Za-z0-9+/]+={0,3})(?: ([^\r\n\0]{0,256}))?$/;

/**
 * An OpenSSH public key line (`type base64 [comment]`), trimmed; the base64 part must decode to a blob that
 * names the same type. A private key, a path, two lines or anything else is refused (400), so nothing but a
 * public key can reach an instance's authorized_keys.
 */
export function parsePublicKey(raw: unknown): string {
  if (typeof raw !== 'string') throw new DomainError('invalid_ssh_key', 'ssh_key must be a string');
  const line = raw.trim();
  if (line.length > MAX_SSH_KEY_LENGTH)
    throw new DomainError('invalid_ssh_key', `ssh_key must be at most ${MAX_SSH_KEY_LENGTH} characters`);
  if (line.includes('PRIVATE KEY'))
    throw new DomainError('invalid_ssh_key', 'That is a private key: send the public one (the .pub file)');
  const match = KEY_LINE.exec(line);
  if (!match)
    throw new DomainError(
      'invalid_ssh_key',
      'ssh_key must be one OpenSSH public key line: ssh-ed25519, ssh-rsa or ecdsa-sha2-* followed by its base64 blob',
    );
  const blob = Buffer.from(match[2]!, 'base64');
  const nameLength = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  if (nameLength !== match[1]!.length || blob.subarray(4, 4 + nameLength).toString('latin1') !== match[1])
    throw new DomainError('invalid_ssh_key', 'The key blob does not match its type: is the key complete?');
  return line;
}

/** A log line about an authorized_keys list: each key's type and comment, never its blob. */
export const authorizedKeysSummary = (keys: readonly string[]): string =>
  `authorized_keys: ${keys.length} key(s)${keys.length ? ': ' : ''}${keys
    .map((k) =>
      k
        .split(' ')
        .filter((_, i) => i !== 1)
        .join(' '),
    )
    .join(', ')}`;
