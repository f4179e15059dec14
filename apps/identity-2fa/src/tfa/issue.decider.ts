import { DomainError } from '@rigmarket/contracts';
import type { ChallengeFields, TfaEvent, TfaPurpose } from './tfa.events';
import { TFA_LIMITS, type TfaState, ms, plus } from './tfa.state';

// Issuing a challenge (TfaChallengeIssued): the SMS number it goes to and the SMS limits (a still valid code
// to the number, sends per hour, set-up attempts per number per day). Shared by the challenge and
// authorization deciders.

export function issue(state: TfaState, c: ChallengeFields, now: string): TfaEvent {
  return {
    type: 'TfaChallengeIssued',
    data: { userId: state.userId, ...c, issuedAt: now, expiresAt: plus(now, TFA_LIMITS.challengeTtlMs) },
  };
}

/**
 * An SMS challenge to the number named (or the account's), unless a code sent to it is still valid or the
 * SMS limits are reached.
 */
export function issueSms(
  state: TfaState,
  c: {
    secretHash: string;
    codeHash: string;
    phone: string | null;
    methodId: number | null;
    purpose: TfaPurpose;
    loggedOut: boolean;
    /** Set-up SMS challenges to this number across all accounts in the last 24 hours. */
    phoneAttemptsToday: number;
  },
  now: string,
): TfaEvent {
  const target = resolveSmsTarget(state, c.phone, c.methodId);
  const recent = state.challenges.find(
    (ch) => ch.active && ch.channel === 'sms' && ch.phone === target.phone && ms(ch.expiresAt) > ms(now),
  );
  if (recent)
    throw new DomainError('tfa_challenge_exists', 'A code was sent recently and is still valid; use resend');
  checkSmsRate(state, target.phone, c.purpose, target.methodId !== null, now, c.phoneAttemptsToday);
  return issue(
    state,
    {
      secretHash: c.secretHash,
      channel: 'sms',
      purpose: c.purpose,
      codeHash: c.codeHash,
      phone: target.phone,
      methodId: target.methodId,
      loggedOut: c.loggedOut,
    },
    now,
  );
}

export function resolveSmsTarget(
  state: TfaState,
  phone: string | null,
  methodId: number | null,
): { phone: string; methodId: number | null } {
  if (methodId !== null) {
    const method = state.methods.find((m) => m.id === methodId);
    if (!method || method.method !== 'sms' || !method.phone)
      throw new DomainError('invalid_tfa_method', 'tfa_method_id does not name an SMS method');
    return { phone: method.phone, methodId };
  }
  if (phone !== null) {
    const known = state.methods.find((m) => m.method === 'sms' && m.phone === phone);
    return { phone, methodId: known?.id ?? null };
  }
  const sms = state.methods.filter((m) => m.method === 'sms');
  const chosen = sms.find((m) => m.isPrimary) ?? sms[0];
  if (chosen?.phone) return { phone: chosen.phone, methodId: chosen.id };
  if (state.legacyPhone) return { phone: state.legacyPhone, methodId: null };
  throw new DomainError('bad_request', 'phone_number is required: no phone number is on the account');
}

export function checkSmsRate(
  state: TfaState,
  phone: string,
  purpose: TfaPurpose,
  knownMethod: boolean,
  now: string,
  acrossAccounts = 0,
): void {
  const hourAgo = ms(now) - 3600_000;
  if (state.smsLog.filter((e) => ms(e.at) > hourAgo).length >= TFA_LIMITS.smsPerHour) {
    throw new DomainError('sms_rate_limited', 'Too many SMS codes requested; wait before asking again');
  }
  if (!knownMethod && (purpose === 'setup' || purpose === 'authorize')) {
    const dayAgo = ms(now) - 24 * 3600_000;
    const used = state.smsLog.filter(
      (e) => e.phone === phone && ms(e.at) > dayAgo && (e.purpose === 'setup' || e.purpose === 'authorize'),
    ).length;
    if (Math.max(used, acrossAccounts) >= TFA_LIMITS.preauthPerPhonePerDay) {
      throw new DomainError(
        'preauth_phone_cap',
        'This phone number was used in too many authorization attempts; try again tomorrow',
      );
    }
  }
}
