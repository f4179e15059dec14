import type { AuthPolicy, AuthStrategy, AuthenticatedRequest, Caller } from '@rigmarket/http-kit';
import { badString, bearerValue } from '@rigmarket/http-kit';
import type { TfaService } from './tfa.service';

/**
 * A logged-out caller holding the tfa_secret its password login (or a code sent to it) gave: read from the
 * body, and only on routes that admit `tfa_secret`. A request with a bearer is judged by its bearer alone.
 */
export class TfaSecretStrategy implements AuthStrategy {
  readonly credential = 'tfa_secret';

  constructor(private readonly tfa: TfaService) {}

  async authenticate(request: AuthenticatedRequest, policy: AuthPolicy): Promise<Caller | null> {
    if (!policy.accepts.includes('tfa_secret') || bearerValue(request) !== undefined) return null;
    const body: unknown = request.body;
    const given =
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>).secret : undefined;
    // A secret that could not have been issued (not a string, too long, NUL) authenticates no one.
    if (typeof given !== 'string' || badString(given, 200) !== undefined) return null;
    const userId = await this.tfa.userOfSecret(given);
    if (userId === null) return null;
    return { credential: 'tfa_secret', keyId: 0, userId, kind: 'tfa_secret', scope: null };
  }
}
