import { deciderSpec } from '@rigmarket/testing';
import { tfaDecider } from '../tfa.decider';
import type { TfaCommand } from '../tfa.decider';
import type {
  TfaBackupCodesIssued,
  TfaChallengeIssued,
  TfaEvent,
  TfaMethodAdded,
  TfaNewMethodAuthorized,
} from '../tfa.events';
import { TFA_LIMITS } from '../tfa.state';

// Shared given/when/then material for the 2FA decider specs.

export const spec = deciderSpec(tfaDecider);
export const T0 = '2026-03-01T12:00:00.000Z';
export const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
/** A 64-hex-digit hash made of one character. */
export const h = (c: string) => c.repeat(64).slice(0, 64);
export const userId = 7;

export const authorized: TfaNewMethodAuthorized = {
  type: 'TfaNewMethodAuthorized',
  data: { userId, until: at(30 * 60_000), via: 'email' },
};
export const totpAdded: TfaMethodAdded = {
  type: 'TfaMethodAdded',
  data: {
    userId,
    methodId: 3,
    method: 'totp',
    label: null,
    phone: null,
    secretEnc: 'v1.x.y.z',
    isPrimary: true,
    totpStep: 100,
    backfilled: false,
    at: T0,
  },
};
export const smsAdded = (methodId: number, phone: string, isPrimary = false): TfaEvent => ({
  type: 'TfaMethodAdded',
  data: {
    userId,
    methodId,
    method: 'sms',
    label: null,
    phone,
    secretEnc: null,
    isPrimary,
    totpStep: null,
    backfilled: false,
    at: T0,
  },
});
export const codes: TfaBackupCodesIssued = {
  type: 'TfaBackupCodesIssued',
  data: { userId, hashes: [h('a'), h('b')], at: T0 },
};
export const emailChallenge: TfaChallengeIssued = {
  type: 'TfaChallengeIssued',
  data: {
    userId,
    secretHash: h('5'),
    channel: 'email',
    purpose: 'authorize',
    codeHash: h('c'),
    phone: null,
    methodId: null,
    loggedOut: false,
    issuedAt: T0,
    expiresAt: at(TFA_LIMITS.challengeTtlMs),
  },
};
/** An SMS code sent at `issuedAt` to +14155550100 (purpose verify). */
export const smsChallenge = (secret: string, issuedAt: string): TfaEvent => ({
  type: 'TfaChallengeIssued',
  data: {
    userId,
    secretHash: h(secret),
    channel: 'sms',
    purpose: 'verify',
    codeHash: h('c'),
    phone: '+14155550100',
    methodId: null,
    loggedOut: false,
    issuedAt,
    expiresAt: at(Date.parse(issuedAt) - Date.parse(T0) + TFA_LIMITS.challengeTtlMs),
  },
});
/** A TOTP proof whose code matched step `step` of method 3 (null: no match). */
export const totpProof = (step: number | null) => ({
  kind: 'totp' as const,
  methodId: null,
  matches: { 3: step },
});

export const confirmTotp = (now: string, totpStep: number | null): TfaCommand => ({
  type: 'ConfirmNewMethod',
  userId,
  method: 'totp',
  methodId: 3,
  label: null,
  phone: null,
  smsProof: null,
  totpStep,
  secretEnc: 'v1.x.y.z',
  backupHashes: [h('a'), h('b')],
  now,
});
