import { DomainError } from '@rigmarket/contracts';
import type { MethodType, TfaEvent } from './tfa.events';
import { TFA_LIMITS, type TfaMethod, type TfaState, authorized, epochSeconds } from './tfa.state';
import { type Proof, currentLock, fail, isLocked, lockedError, verify } from './verification.decider';

// Methods (TOTP and SMS) and backup codes: adding a method inside the add-method window, removing,
// updating, regenerating backup codes, and the legacy accounts from before method rows existed.

export interface ConfirmNewMethod {
  type: 'ConfirmNewMethod';
  userId: number;
  method: MethodType;
  methodId: number;
  label: string | null;
  /** SMS: the phone number of the set-up challenge (must match); TOTP: null. */
  phone: string | null;
  /** SMS: the set-up challenge; TOTP: the step the code matched against the new secret, or null. */
  smsProof: Proof | null;
  totpStep: number | null;
  secretEnc: string | null;
  backupHashes: string[];
  now: string;
}
export interface RemoveMethod {
  type: 'RemoveMethod';
  userId: number;
  proof: Proof | null;
  targetId: number | null;
  now: string;
}
export interface UpdateMethod {
  type: 'UpdateMethod';
  userId: number;
  methodId: number | null;
  method: MethodType | null;
  label?: string;
  isPrimary?: boolean;
  now: string;
}
export interface RegenerateBackupCodes {
  type: 'RegenerateBackupCodes';
  userId: number;
  proof: Proof;
  hashes: string[];
  backfillMethodId: number;
  now: string;
}
export interface MarkLegacy {
  type: 'MarkLegacy';
  userId: number;
  phone: string | null;
  now: string;
}
export type MethodCommand =
  ConfirmNewMethod | RemoveMethod | UpdateMethod | RegenerateBackupCodes | MarkLegacy;

export function confirmNewMethod(command: ConfirmNewMethod, state: TfaState): TfaEvent[] {
  const now = command.now;
  if (command.label !== null && command.label.length > TFA_LIMITS.labelMax)
    throw new DomainError('bad_request', 'label must be at most 30 characters');
  if (state.legacy && state.methods.length === 0) {
    throw new DomainError(
      'untracked_2fa_found',
      'This account has untracked (legacy) 2FA: regenerate backup codes before adding a method',
    );
  }
  if (!authorized(state, now))
    throw new DomainError(
      'authorization_required',
      'Adding a 2FA method needs a fresh authorization (authorize-new-method)',
    );
  const events: TfaEvent[] = [];
  let phone: string | null = null;
  if (command.method === 'totp') {
    if (state.methods.some((m) => m.method === 'totp'))
      throw new DomainError('duplicate_tfa_method', 'A TOTP method is already configured');
    const lock = currentLock(state, 'totp-setup', now);
    if (isLocked(lock, now)) throw lockedError(lock, now);
    if (command.totpStep === null) return fail(state, 'totp-setup', lock, now);
  } else {
    if (!command.smsProof) throw new DomainError('missing_params', 'code and secret are required');
    const verified = verify(state, command.smsProof, now, ['setup', 'verify', 'authorize']);
    if (!verified.ok) return verified.events;
    phone = verified.challenge?.phone ?? null;
    if (command.phone !== null && command.phone !== phone)
      throw new DomainError('bad_request', 'phone_number does not match the number the code was sent to');
    if (state.methods.some((m) => m.method === 'sms' && m.phone === phone)) {
      throw new DomainError(
        'duplicate_tfa_method',
        'An SMS method with this phone number is already configured',
      );
    }
    events.push(...verified.events);
  }
  const first = state.methods.length === 0;
  events.push({
    type: 'TfaMethodAdded',
    data: {
      userId: state.userId,
      methodId: command.methodId,
      method: command.method,
      label: command.label,
      phone,
      secretEnc: command.method === 'totp' ? command.secretEnc : null,
      isPrimary: first,
      totpStep: command.totpStep,
      backfilled: false,
      at: now,
    },
  });
  if (first && !state.enabled)
    events.push({
      type: 'TfaBackupCodesIssued',
      data: { userId: state.userId, hashes: command.backupHashes, at: now },
    });
  return events;
}

export function removeMethod(command: RemoveMethod, state: TfaState): TfaEvent[] {
  const now = command.now;
  if (state.legacy && state.methods.length === 0)
    return [{ type: 'TfaDisabled', data: { userId: state.userId, at: now } }];
  if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
  if (!command.proof) throw new DomainError('missing_auth_value', 'code or backup_code is required');
  if (command.proof.kind === 'backup' && command.targetId === null)
    throw new DomainError('bad_request', 'target_id is required with backup_code');
  const verified = verify(state, command.proof, now, ['login', 'verify', 'authorize']);
  if (!verified.ok) return verified.events;
  const targetId = command.targetId ?? verified.methodId;
  const target = state.methods.find((m) => m.id === targetId);
  if (!target) throw new DomainError('invalid_tfa_method', 'No 2FA method with this id: send target_id');
  const events: TfaEvent[] = [
    ...verified.events,
    { type: 'TfaMethodRemoved', data: { userId: state.userId, methodId: target.id, at: now } },
  ];
  if (state.methods.length === 1)
    events.push({ type: 'TfaDisabled', data: { userId: state.userId, at: now } });
  return events;
}

export function updateMethod(command: UpdateMethod, state: TfaState): TfaEvent[] {
  const now = command.now;
  let method: TfaMethod | undefined;
  if (command.methodId !== null) {
    method = state.methods.find((m) => m.id === command.methodId);
  } else if (command.method !== null) {
    const ofType = state.methods.filter((m) => m.method === command.method);
    if (ofType.length > 1)
      throw new DomainError('bad_request', 'Several methods of this type exist: send tfa_method_id');
    method = ofType[0];
  } else {
    throw new DomainError('bad_request', 'tfa_method_id or tfa_method is required');
  }
  if (!method) throw new DomainError('invalid_tfa_method', 'No such 2FA method');
  if (command.label !== undefined && command.label.length > TFA_LIMITS.labelMax)
    throw new DomainError('bad_request', 'label must be at most 30 characters');
  return [
    {
      type: 'TfaMethodUpdated',
      data: {
        userId: state.userId,
        methodId: method.id,
        ...(command.label !== undefined ? { label: command.label } : {}),
        ...(command.isPrimary !== undefined ? { isPrimary: command.isPrimary } : {}),
        at: now,
      },
    },
  ];
}

export function regenerateBackupCodes(command: RegenerateBackupCodes, state: TfaState): TfaEvent[] {
  const now = command.now;
  if (!state.enabled) throw new DomainError('bad_request', '2FA is not enabled on this account');
  const verified = verify(state, command.proof, now, ['login', 'verify', 'authorize']);
  if (!verified.ok) return verified.events;
  const events: TfaEvent[] = [...verified.events];
  if (state.legacy && state.methods.length === 0) {
    if (!state.legacyPhone)
      throw new DomainError('bad_request', 'No phone number on file to backfill the legacy SMS method');
    events.push({
      type: 'TfaMethodAdded',
      data: {
        userId: state.userId,
        methodId: command.backfillMethodId,
        method: 'sms',
        label: null,
        phone: state.legacyPhone,
        secretEnc: null,
        isPrimary: true,
        totpStep: null,
        backfilled: true,
        at: now,
      },
    });
  }
  events.push({
    type: 'TfaBackupCodesIssued',
    data: { userId: state.userId, hashes: command.hashes, at: now },
  });
  return events;
}

export function markLegacy(command: MarkLegacy, state: TfaState): TfaEvent[] {
  return [{ type: 'TfaLegacyMarked', data: { userId: state.userId, phone: command.phone, at: command.now } }];
}

/** The status view of one method (phone masked, TOTP secret never shown). */
export function methodView(state: TfaState, m: TfaMethod, now: string) {
  const lock = currentLock(state, m.id, now);
  return {
    id: m.id,
    user_id: state.userId,
    method: m.method,
    // The spec's types: label a string ("" when none was given); last_used null until the first use.
    label: m.label ?? '',
    phone_number: m.phone ? maskPhone(m.phone) : null,
    is_primary: m.isPrimary,
    fail_count: lock.failCount,
    locked_until: isLocked(lock, now) ? epochSeconds(lock.lockedUntil) : null,
    created_at: epochSeconds(m.createdAt) ?? 0,
    last_used: epochSeconds(m.lastUsed),
  };
}

export function maskPhone(phone: string): string {
  return `******${phone.slice(-4)}`;
}
