import { DomainError } from '@rigmarket/contracts';
import type { TfaChannel, TfaEvent, TfaPurpose } from './tfa.events';
import { type Challenge, TFA_LIMITS, type TfaState, ms, plus } from './tfa.state';
import { type Proof, findChallenge, verify } from './verification.decider';

// Challenges: the tfa_secret handed out at a password login, codes sent by e-mail or SMS (with the SMS
// limits), resends and cancellations, and completing a login with a proof.

export interface IssueLoginChallenge {
  type: 'IssueLoginChallenge';
  userId: number;
  secretHash: string;
  now: string;
}
export interface SendEmailCode {
  type: 'SendEmailCode';
  userId: number;
  secretHash: string;
  codeHash: string;
  purpose: TfaPurpose;
  loggedOut: boolean;
  emailVerified: boolean;
  now: string;
}
export interface SendSmsCode {
  type: 'SendSmsCode';
  userId: number;
  secretHash: string;
  codeHash: string;
  phone: string | null;
  methodId: number | null;
  purpose: TfaPurpose;
  loggedOut: boolean;
  /** E-mail verified, or an admin (exempt on the SMS send endpoints only). */
  mayReceiveCodes: boolean;
  /** Set-up SMS challenges to this number across all accounts in the last 24 hours (read model). */
  phoneAttemptsToday: number;
  now: string;
}
export interface ResendSmsCode {
  type: 'ResendSmsCode';
  userId: number;
  secretHash: string | null;
  newSecretHash: string;
  codeHash: string;
  phone: string | null;
  methodId: number | null;
  now: string;
}
export interface CancelChallenge {
  type: 'CancelChallenge';
  userId: number;
  secretHash: string;
  reason: string;
}
export interface CompleteLogin {
  type: 'CompleteLogin';
  userId: number;
  proof: Proof;
  sessionKeyId: number;
  now: string;
}
export type ChallengeCommand =
  IssueLoginChallenge | SendEmailCode | SendSmsCode | ResendSmsCode | CancelChallenge | CompleteLogin;

export function issueLoginChallenge(command: IssueLoginChallenge, state: TfaState): TfaEvent[] {
  return [
    issue(
      state,
      {
        secretHash: command.secretHash,
        channel: null,
        purpose: 'login',
        codeHash: null,
        phone: null,
        methodId: null,
        loggedOut: true,
      },
      command.now,
    ),
  ];
}

export function sendEmailCode(command: SendEmailCode, state: TfaState): TfaEvent[] {
  if (!command.emailVerified)
    throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
  return [
    issue(
      state,
      {
        secretHash: command.secretHash,
        channel: 'email',
        purpose: command.purpose,
        codeHash: command.codeHash,
        phone: null,
        methodId: null,
        loggedOut: command.loggedOut,
      },
      command.now,
    ),
  ];
}

export function sendSmsCode(command: SendSmsCode, state: TfaState): TfaEvent[] {
  if (!command.mayReceiveCodes)
    throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
  return [issueSms(state, command, command.now)];
}

export function resendSmsCode(command: ResendSmsCode, state: TfaState): TfaEvent[] {
  const now = command.now;
  let challenge: Challenge | undefined;
  if (command.secretHash !== null) {
    challenge = findChallenge(state, command.secretHash);
    if (!challenge || challenge.channel !== 'sms')
      throw new DomainError('challenge_not_found', 'No SMS challenge matches this secret');
  } else {
    const phone =
      command.methodId !== null ? resolveSmsTarget(state, null, command.methodId).phone : command.phone;
    if (phone === null)
      throw new DomainError('bad_request', 'phone_number or tfa_method_id is required without a secret');
    challenge = [...state.challenges]
      .reverse()
      .find((c) => c.channel === 'sms' && c.phone === phone && c.active);
  }
  if (!challenge || !challenge.active)
    throw new DomainError('no_challenge_found', 'No active SMS challenge to resend; request a new code');
  if (command.phone !== null && command.phone !== challenge.phone) {
    throw new DomainError('bad_request', 'phone_number does not match the original challenge');
  }
  checkSmsRate(state, challenge.phone!, 'verify', true, now);
  return [
    {
      type: 'TfaChallengeCodeReplaced',
      data: {
        userId: state.userId,
        oldSecretHash: challenge.secretHash,
        secretHash: command.secretHash ?? command.newSecretHash,
        codeHash: command.codeHash,
        issuedAt: now,
        expiresAt: plus(now, TFA_LIMITS.challengeTtlMs),
      },
    },
  ];
}

export function cancelChallenge(command: CancelChallenge, state: TfaState): TfaEvent[] {
  return [
    {
      type: 'TfaChallengeCancelled',
      data: { userId: state.userId, secretHash: command.secretHash, reason: command.reason },
    },
  ];
}

export function completeLogin(command: CompleteLogin, state: TfaState): TfaEvent[] {
  if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
  const verified = verify(state, command.proof, command.now, ['login', 'verify']);
  if (!verified.ok) return verified.events;
  return [
    ...verified.events,
    {
      type: 'TfaLoginCompleted',
      data: { userId: state.userId, sessionKeyId: command.sessionKeyId, via: verified.via, at: command.now },
    },
  ];
}

// ---------------------------------------------------------------------------------------------

export function issue(
  state: TfaState,
  c: {
    secretHash: string;
    channel: TfaChannel | null;
    purpose: TfaPurpose;
    codeHash: string | null;
    phone: string | null;
    methodId: number | null;
    loggedOut: boolean;
  },
  now: string,
): TfaEvent {
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

function resolveSmsTarget(
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

function checkSmsRate(
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
