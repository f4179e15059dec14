import { DomainError } from '@rigmarket/contracts';
import type { TfaChannel, TfaEvent } from './tfa.events';
import { TFA_LIMITS, type TfaState, ms, plus } from './tfa.state';
import { issue, issueSms } from './issue.decider';
import { type Proof, findChallenge, totpMethod, verify } from './verification.decider';

// The add-method authorization: a challenge (e-mail, SMS or TOTP) or a backup code opens a 30-minute
// window in which confirm-new may add a method (methods.decider.ts).

export interface StartAuthorization {
  type: 'StartAuthorization';
  userId: number;
  tfaMethod: TfaChannel | null;
  methodId: number | null;
  backupCodeHash: string | null;
  secretHash: string;
  codeHash: string;
  emailVerified: boolean;
  now: string;
}
export interface ConfirmAuthorization {
  type: 'ConfirmAuthorization';
  userId: number;
  secretHash: string;
  proof: Proof;
  now: string;
}
export type AuthorizationCommand = StartAuthorization | ConfirmAuthorization;

export function startAuthorization(command: StartAuthorization, state: TfaState): TfaEvent[] {
  const now = command.now;
  if (command.backupCodeHash !== null) {
    const verified = verify(state, { kind: 'backup', codeHash: command.backupCodeHash }, now, []);
    if (!verified.ok) return verified.events;
    return [
      ...verified.events,
      {
        type: 'TfaNewMethodAuthorized',
        data: { userId: state.userId, until: plus(now, TFA_LIMITS.authorizationMs), via: 'backup_code' },
      },
    ];
  }
  let channel: TfaChannel = command.tfaMethod ?? 'email';
  let methodId = command.methodId;
  if (state.methods.length === 0) {
    // Users with no methods are forced to e-mail.
    channel = 'email';
    methodId = null;
  } else if (methodId !== null) {
    const method = state.methods.find((m) => m.id === methodId);
    if (!method) throw new DomainError('invalid_tfa_method', 'No 2FA method with this tfa_method_id');
    channel = method.method;
  }
  const challenge = { secretHash: command.secretHash, purpose: 'authorize' as const, loggedOut: false };
  if (channel === 'totp') {
    const method = totpMethod(state, methodId);
    return [
      issue(state, { ...challenge, channel: 'totp', codeHash: null, phone: null, methodId: method.id }, now),
    ];
  }
  if (!command.emailVerified)
    throw new DomainError('email_not_verified', 'Verify your e-mail address before using 2FA codes');
  if (channel === 'email') {
    return [
      issue(
        state,
        { ...challenge, channel: 'email', codeHash: command.codeHash, phone: null, methodId: null },
        now,
      ),
    ];
  }
  return [
    issueSms(
      state,
      { ...challenge, codeHash: command.codeHash, phone: null, methodId, phoneAttemptsToday: 0 },
      now,
    ),
  ];
}

export function confirmAuthorization(command: ConfirmAuthorization, state: TfaState): TfaEvent[] {
  const now = command.now;
  const pending = state.challenges.filter((c) => c.purpose === 'authorize');
  if (pending.length === 0)
    throw new DomainError(
      'no_pending_authorization',
      'No pending authorization: call POST authorize-new-method first',
    );
  const challenge = findChallenge(state, command.secretHash);
  if (!challenge || challenge.purpose !== 'authorize')
    throw new DomainError('challenge_not_found', 'No authorization challenge matches this secret');
  if (!challenge.active)
    throw new DomainError('no_challenge_found', 'No active challenge: it was used or cleared; start again');
  if (ms(challenge.expiresAt) <= ms(now))
    throw new DomainError('2fa_expired', 'The 2FA code has expired; start again');
  let proof = command.proof;
  if (challenge.channel === 'totp') {
    if (proof.kind !== 'totp')
      throw new DomainError('bad_request', 'This authorization is by TOTP: send the TOTP code');
    proof = { ...proof, methodId: challenge.methodId };
  } else if (proof.kind === 'code') {
    proof = { ...proof, channel: challenge.channel === 'sms' ? 'sms' : 'email' };
  }
  const verified = verify(state, proof, now, ['authorize']);
  if (!verified.ok) return verified.events;
  const consumed: TfaEvent[] =
    challenge.channel === 'totp'
      ? [
          {
            type: 'TfaChallengeCancelled',
            data: { userId: state.userId, secretHash: challenge.secretHash, reason: 'used' },
          },
        ]
      : [];
  return [
    ...verified.events,
    ...consumed,
    {
      type: 'TfaNewMethodAuthorized',
      data: { userId: state.userId, until: plus(now, TFA_LIMITS.authorizationMs), via: verified.via },
    },
  ];
}
