import { generateKeyPairSync } from 'node:crypto';

/** A fresh OpenSSH ed25519 public key line (string "ssh-ed25519", string <32-byte key>), as a .pub file holds it. */
export function ed25519PublicKeyLine(comment = 'me@laptop'): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const part = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  const blob = Buffer.concat([part(Buffer.from('ssh-ed25519')), part(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}
