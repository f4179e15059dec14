import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { DomainError } from '@rigmarket/contracts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Addresses a webhook must not reach unless the operator allows private targets: loopback, private
 * networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, unspecified, multicast and
 * reserved ranges, in IPv4 and IPv6 (an IPv4-mapped IPv6 address is judged as its IPv4 address).
 */
const PRIVATE_RANGES = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv6');

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return PRIVATE_RANGES.check(mapped[1]!, 'ipv4');
    return PRIVATE_RANGES.check(address, 'ipv6');
  }
  return PRIVATE_RANGES.check(address, 'ipv4');
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const invalid = (msg: string) => new DomainError('invalid_webhook', msg);

/**
 * An endpoint's URL as stored: http or https, at most MAX_WEBHOOK_URL_LENGTH characters, no credentials in
 * it. Unless `allowPrivate`, a literal private address or `localhost` is refused here; a name is resolved
 * and checked again at every delivery (`guardedLookup`), since what it resolves to can change.
 */
export function parseWebhookUrl(raw: unknown, allowPrivate: boolean): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid('url must be an http or https URL');
  const text = raw.trim();
  if (text.length > MAX_WEBHOOK_URL_LENGTH)
    throw invalid(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('url must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url must use http or https');
  if (url.username || url.password) throw invalid('url must not carry credentials');
  const host = hostOf(url).toLowerCase();
  if (!host) throw invalid('url must name a host');
  if (!allowPrivate && (isPrivateAddress(host) || host === 'localhost' || host.endsWith('.localhost')))
    throw invalid('url must not point at a private, loopback or link-local address');
  url.hash = '';
  return url.toString();
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that refuses names resolving to a private address (unless allowed), so the
 * address checked is the address connected to (no second resolution an attacker could change).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const usable = allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        const refused: NodeJS.ErrnoException = new Error(
          `${hostname} resolves only to private addresses, which webhooks may not reach`,
        );
        refused.code = 'EWEBHOOKTARGET';
        return callback(refused, []);
      }
      if (options.all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
