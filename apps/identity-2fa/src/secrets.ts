import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { ApiError } from '@rigmarket/contracts';

const rawScrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;

/**
 * Password hashing is bounded: at most RIGMARKET_PASSWORD_HASH_CONCURRENCY scrypt runs at once (default 2)
 * and RIGMARKET_PASSWORD_HASH_QUEUE waiting (default 32); past that a login or registration is shed with
 * 503 `busy` and Retry-After, so a flood of (failed) logins cannot take the whole libuv thread pool that
 * every other request's file and crypto work needs (docs/benchmarks.md, bench/login-flood.js).
 */
export class HashingGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly concurrency: number,
    readonly queue: number,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): HashingGate {
    const number = (value: string | undefined, fallback: number) =>
      Number(value) > 0 ? Math.floor(Number(value)) : fallback;
    return new HashingGate(
      number(env.RIGMARKET_PASSWORD_HASH_CONCURRENCY, 2),
      number(env.RIGMARKET_PASSWORD_HASH_QUEUE, 32),
    );
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue)
        throw new ApiError(503, 'busy', 'Too many logins in progress; retry in a moment', { retry_after: 1 });
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter; otherwise it is freed.
      if (next) next();
      else this.running -= 1;
    }
  }
}

export const hashingGate = HashingGate.fromEnv();

const scrypt = (password: string, salt: Buffer, keylen: number, options: object): Promise<Buffer> =>
  hashingGate.run(() => rawScrypt(password, salt, keylen, options));
const N = 16384;
const R = 8;
const P = 1;

/** `scrypt$N$r$p$salt$hash`, so parameters can be raised later without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('hex')}$${hash.toString('hex')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    // Spend the same time as a real check, so unknown accounts are not told apart by timing.
    await scrypt(password, randomBytes(16), 32, { N, r: R, p: P });
    return false;
  }
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'hex');
  const actual = await scrypt(password, Buffer.from(salt, 'hex'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** 64 hex characters, like the keys real clients already handle. */
export function newKeyValue(): string {
  return randomBytes(32).toString('hex');
}

export function newVerificationToken(): string {
  return randomBytes(16).toString('hex');
}
