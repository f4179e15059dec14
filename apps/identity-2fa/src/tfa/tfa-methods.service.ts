import { Injectable } from '@nestjs/common';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import { hashKey } from '@rigmarket/http-kit';
import {
  hashBackupCode,
  hashCode,
  newBackupCode,
  newTotpSecret,
  provisioningUri,
  totpStep,
} from './tfa.crypto';
import type { ConfirmNewRequest, ProofRequest, RemoveRequest, UpdateRequest } from './tfa.dto';
import { methodView } from './methods.decider';
import { TFA_LIMITS } from './tfa.state';
import { TfaIo } from './tfa.io';
import type { Proof } from './verification.decider';

/**
 * 2FA methods and backup codes (methods.decider.ts): the status, TOTP set-up, adding (confirm-new), updating
 * and removing methods, regenerating backup codes, and marking legacy accounts.
 */
@Injectable()
export class TfaMethodsService extends TfaIo {
  async status(userId: number) {
    const state = await this.state(userId);
    const now = this.now();
    return {
      success: true,
      tfa_enabled: state.enabled,
      methods: state.methods.map((m) => methodView(state, m, now.toISOString())),
      backup_codes_remaining: state.backup.filter((b) => !b.used).length,
      new_method_authorized: state.authorizedUntil !== null && new Date(state.authorizedUntil) > now,
    };
  }

  async totpSetup(userId: number) {
    const row = await this.user(userId);
    const secret = newTotpSecret();
    return { success: true, secret, provisioning_uri: provisioningUri(secret, row.email) };
  }

  async confirmNew(userId: number, input: ConfirmNewRequest, metadata: EventMetadata) {
    const method = input.tfa_method;
    if (method === 'email')
      throw new ApiError(400, 'invalid_tfa_method', 'E-mail cannot be stored as a method: use sms or totp');
    if (!input.code || !input.secret)
      throw new ApiError(400, 'missing_params', 'code and secret are required');
    const methodId = await this.runtime.nextId('tfa_method_ids');
    const codes = Array.from({ length: TFA_LIMITS.backupCodes }, newBackupCode);
    let totp: number | null = null;
    let secretEnc: string | null = null;
    if (input.tfa_method === 'totp') {
      totp = totpStep(input.secret, input.code, this.now());
      secretEnc = this.box.seal(input.secret);
    }
    const smsProof: Proof | null =
      input.tfa_method === 'sms'
        ? {
            kind: 'code',
            channel: 'sms',
            secretHash: hashKey(input.secret),
            codeHash: hashCode(input.code),
            methodId: null,
          }
        : null;
    const events = await this.run(
      userId,
      (now) => ({
        type: 'ConfirmNewMethod',
        userId,
        method,
        methodId,
        label: input.label ?? null,
        phone: input.phone_number ?? null,
        smsProof,
        totpStep: totp,
        secretEnc,
        backupHashes: codes.map(hashBackupCode),
        now,
      }),
      metadata,
    );
    const body: Record<string, unknown> = {
      success: true,
      msg:
        input.tfa_method === 'sms'
          ? 'SMS 2FA method added successfully.'
          : 'TOTP 2FA method added successfully.',
      method_id: methodId,
    };
    if (events.some((e) => e.type === 'TfaBackupCodesIssued')) body.backup_codes = codes;
    return body;
  }

  async remove(userId: number, input: RemoveRequest, metadata: EventMetadata) {
    const state = await this.state(userId);
    const legacy = state.legacy && state.methods.length === 0;
    const proof = legacy || (!input.code && !input.backup_code) ? null : this.proof(state, input);
    const events = await this.run(
      userId,
      (now) => ({ type: 'RemoveMethod', userId, proof, targetId: input.target_id ?? null, now }),
      metadata,
    );
    // No remaining_methods here: the vastai CLI then reports that all methods were removed and 2FA is off.
    if (events.some((e) => e.type === 'TfaDisabled'))
      return { success: true, msg: '2FA Successfully Disabled' };
    const after = await this.state(userId);
    return { success: true, msg: '2FA method removed', remaining_methods: after.methods.length };
  }

  async update(userId: number, input: UpdateRequest, metadata: EventMetadata) {
    if (input.tfa_method === 'email')
      throw new ApiError(
        400,
        'invalid_tfa_method',
        'E-mail is not a stored method: update applies to sms and totp',
      );
    const events = await this.run(
      userId,
      (now) => ({
        type: 'UpdateMethod',
        userId,
        methodId: input.tfa_method_id ?? null,
        method: input.tfa_method === 'sms' || input.tfa_method === 'totp' ? input.tfa_method : null,
        ...(input.label !== undefined ? { label: input.label } : {}),
        ...(input.is_primary !== undefined ? { isPrimary: input.is_primary } : {}),
        now,
      }),
      metadata,
    );
    const updated = events.find((e) => e.type === 'TfaMethodUpdated');
    const state = await this.state(userId);
    const method = state.methods.find(
      (m) => updated?.type === 'TfaMethodUpdated' && m.id === updated.data.methodId,
    );
    return {
      success: true,
      msg: '2FA method updated',
      method: method ? methodView(state, method, this.now().toISOString()) : null,
    };
  }

  async regenerateBackupCodes(userId: number, input: ProofRequest, metadata: EventMetadata) {
    const state = await this.state(userId);
    const proof = this.proof(state, input);
    const codes = Array.from({ length: TFA_LIMITS.backupCodes }, newBackupCode);
    const backfillMethodId = await this.runtime.nextId('tfa_method_ids');
    await this.run(
      userId,
      (now) => ({
        type: 'RegenerateBackupCodes',
        userId,
        proof,
        hashes: codes.map(hashBackupCode),
        backfillMethodId,
        now,
      }),
      metadata,
    );
    return { success: true, msg: 'success', backup_codes: codes };
  }

  /** Operator / migration path: marks an account as legacy 2FA (on, no method rows, phone on file). */
  async markLegacy(userId: number, phone: string | null, metadata: EventMetadata): Promise<void> {
    await this.run(userId, (now) => ({ type: 'MarkLegacy', userId, phone, now }), metadata);
  }
}
