import { DomainError } from '@rigmarket/contracts';
import type { TfaEvent, TfaPurpose } from './tfa.events';
import { type Challenge, TFA_LIMITS, type TfaState, plus } from './tfa.state';
import { checkSmsRate, issue, issueSms, resolveSmsTarget } from './issue.decider';
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
