import { ApiError } from '@rigmarket/contracts';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export const LOGIN_THROTTLE = Symbol('LOGIN_THROTTLE');

export interface LoginLockout {
  /** Failed password logins of one account before it locks (RIGMARKET_LOGIN_MAX_FAILURES, default 5). */
  maxFailures: number;
  /** How long the failures count and the lock lasts (RIGMARKET_LOGIN_LOCKOUT_S, default 900). */
  lockoutS: number;
}

export function loginLockoutFromEnv(env: NodeJS.ProcessEnv = process.env): LoginLockout {
  const positive = (value: string | undefined, fallback: number) =>
    Number(value) > 0 ? Math.floor(Number(value)) : fallback;
  return {
    maxFailures: positive(env.RIGMARKET_LOGIN_MAX_FAILURES, 5),
    lockoutS: positive(env.RIGMARKET_LOGIN_LOCKOUT_S, 900),
  };
}

/**
 * Password login locks after repeated failures, as 2FA methods do: `maxFailures` wrong passwords for one
 * login name within `lockoutS` lock it for `lockoutS` (429 `login_locked` with Retry-After), checked
 * before any scrypt work; a correct password clears the count. Counted per process (rate-limiter-flexible's
 * memory store).
 */
export class LoginThrottle {
  private readonly failures: RateLimiterMemory;

  constructor(readonly limits: LoginLockout = loginLockoutFromEnv()) {
    this.failures = new RateLimiterMemory({
      keyPrefix: 'login-failures',
      points: limits.maxFailures,
      duration: limits.lockoutS,
      blockDuration: limits.lockoutS,
    });
  }

  private static key(login: string): string {
    return login.trim().toLowerCase();
  }

  /** Throws 429 login_locked while the login is locked. */
  async check(login: string): Promise<void> {
    const res = await this.failures.get(LoginThrottle.key(login));
    if (res && res.consumedPoints >= this.limits.maxFailures) throw this.locked(res);
  }

  /** Counts a failure; the one that reaches the limit locks the login. */
  async failed(login: string): Promise<void> {
    try {
      await this.failures.consume(LoginThrottle.key(login));
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
    }
  }

  async succeeded(login: string): Promise<void> {
    await this.failures.delete(LoginThrottle.key(login));
  }

  private locked(res: RateLimiterRes): ApiError {
    const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return new ApiError(
      429,
      'login_locked',
      `Too many failed logins for this account: try again in ${retryAfter} s`,
      { retry_after: retryAfter },
    );
  }
}
