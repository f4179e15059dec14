import { Injectable } from '@nestjs/common';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import { hashKey } from '@rigmarket/http-kit';
import { SCHEMA } from '../schema';
import { issueSessionKey } from '../api-keys/session-key';
import { type UserView, toUserView } from '../read-models/users/queries';
import { hashBackupCode, hashCode, newCode, newTfaSecret } from './tfa.crypto';
import type { AuthorizeRequest, LoginRequest } from './tfa.dto';
import type { TfaPurpose } from './tfa.events';
import { type TfaCaller, TfaIo } from './tfa.io';
import { findChallenge } from './verification.decider';

/**
 * 2FA challenges and logins (challenges.decider.ts, authorization.decider.ts): codes sent by e-mail or SMS,
 * the add-method authorization, completing a login with a proof, and the tfa_secret a logged-out caller
 * authenticates with. Each method loads the user's 2FA stream, decides and appends through the command
 * runner, then delivers the code (TfaIo).
 */
@Injectable()
export class TfaService extends TfaIo {
  /** The user a logged-out caller's tfa_secret belongs to, if the challenge still authenticates. */
  async userOfSecret(secret: string): Promise<number | null> {
    const hash = hashKey(secret);
    const rows = await this.runtime.db.query<{ user_id: number }>(
      `SELECT user_id FROM ${SCHEMA}.tfa_secrets WHERE secret_hash = $1`,
      [hash],
    );
    if (!rows[0]) return null;
    const userId = Number(rows[0].user_id);
    const state = await this.state(userId);
    const challenge = findChallenge(state, hash);
    if (!challenge || !challenge.loggedOut || !challenge.active) return null;
    if (new Date(challenge.expiresAt) <= this.now())
      throw new ApiError(400, '2fa_expired', 'The 2FA challenge has expired; log in again');
    return userId;
  }

  async sendEmail(caller: TfaCaller, metadata: EventMetadata) {
    const row = await this.user(caller.userId);
    const secret = newTfaSecret();
    const code = newCode();
    const userId = caller.userId;
    await this.run(
      userId,
      (now) => ({
        type: 'SendEmailCode',
        userId,
        secretHash: hashKey(secret),
        codeHash: hashCode(code),
        purpose: caller.keyId === null ? 'login' : 'verify',
        loggedOut: caller.keyId === null,
        emailVerified: row.email_verified_at !== null,
        now,
      }),
      metadata,
    );
    await this.deliverEmail(row.email, code);
    return { success: true, msg: '2FA code sent to your email address.', secret };
  }

  async sendSms(caller: TfaCaller, phone: string | null, methodId: number | null, metadata: EventMetadata) {
    const row = await this.user(caller.userId);
    const state = await this.state(caller.userId);
    const known = phone === null || state.methods.some((m) => m.method === 'sms' && m.phone === phone);
    if (caller.keyId === null && !known)
      throw new ApiError(
        403,
        'auth_error',
        'A logged-out caller may only use the phone numbers on the account',
      );
    const purpose: TfaPurpose = caller.keyId === null ? 'login' : known ? 'verify' : 'setup';
    const since = new Date(this.now().getTime() - 24 * 3600_000).toISOString();
    const [{ n }] =
      phone !== null && !known
        ? ((await this.runtime.db.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM ${SCHEMA}.tfa_phone_setups WHERE phone_hash = $1 AND issued_at > $2`,
            [hashKey(phone), since],
          )) as [{ n: string }])
        : [{ n: '0' }];
    const secret = newTfaSecret();
    const code = newCode();
    const userId = caller.userId;
    const events = await this.run(
      userId,
      (now) => ({
        type: 'SendSmsCode',
        userId,
        secretHash: hashKey(secret),
        codeHash: hashCode(code),
        phone,
        methodId,
        purpose,
        loggedOut: caller.keyId === null,
        mayReceiveCodes: row.email_verified_at !== null || row.is_admin,
        phoneAttemptsToday: Number(n),
        now,
      }),
      metadata,
    );
    const issued = events.find((e) => e.type === 'TfaChallengeIssued');
    if (issued?.type === 'TfaChallengeIssued' && issued.data.phone)
      await this.deliverSms(userId, issued.data.phone, code, hashKey(secret), metadata);
    return { success: true, msg: '2FA Sent', secret };
  }

  async resendSms(
    caller: TfaCaller,
    secret: string | null,
    phone: string | null,
    methodId: number | null,
    metadata: EventMetadata,
  ) {
    const row = await this.user(caller.userId);
    if (!(row.email_verified_at !== null || row.is_admin))
      throw new ApiError(400, 'email_not_verified', 'Verify your e-mail address before using 2FA codes');
    const newSecret = secret ?? newTfaSecret();
    const code = newCode();
    const userId = caller.userId;
    const state = await this.state(userId);
    const events = await this.run(
      userId,
      (now) => ({
        type: 'ResendSmsCode',
        userId,
        secretHash: secret ? hashKey(secret) : null,
        newSecretHash: hashKey(newSecret),
        codeHash: hashCode(code),
        phone,
        methodId,
        now,
      }),
      metadata,
    );
    const replaced = events.find((e) => e.type === 'TfaChallengeCodeReplaced');
    const challenge =
      replaced?.type === 'TfaChallengeCodeReplaced'
        ? findChallenge(state, replaced.data.oldSecretHash)
        : undefined;
    if (challenge?.phone) await this.deliverSms(userId, challenge.phone, code, hashKey(newSecret), metadata);
    return { success: true, msg: 'A 6-digit code has been sent to your phone', secret: newSecret };
  }

  async authorizeStart(userId: number, input: AuthorizeRequest, metadata: EventMetadata) {
    const row = await this.user(userId);
    const secret = newTfaSecret();
    const code = newCode();
    const events = await this.run(
      userId,
      (now) => ({
        type: 'StartAuthorization',
        userId,
        tfaMethod: input.tfa_method ?? null,
        methodId: input.tfa_method_id ?? null,
        backupCodeHash: input.backup_code ? hashBackupCode(input.backup_code) : null,
        secretHash: hashKey(secret),
        codeHash: hashCode(code),
        emailVerified: row.email_verified_at !== null,
        now,
      }),
      metadata,
    );
    if (input.backup_code) return { success: true, msg: 'Authorization successful.' };
    const issued = events.find((e) => e.type === 'TfaChallengeIssued');
    if (issued?.type === 'TfaChallengeIssued') {
      if (issued.data.channel === 'email') await this.deliverEmail(row.email, code);
      if (issued.data.channel === 'sms' && issued.data.phone)
        await this.deliverSms(userId, issued.data.phone, code, hashKey(secret), metadata);
    }
    return {
      success: true,
      secret,
      msg:
        issued?.type === 'TfaChallengeIssued' && issued.data.channel === 'totp'
          ? 'Enter the code from your authenticator app'
          : 'A 6-digit code has been sent',
    };
  }

  async authorizeConfirm(
    userId: number,
    code: string | undefined,
    secret: string | undefined,
    metadata: EventMetadata,
  ) {
    if (!code || !secret) throw new ApiError(400, 'missing_params', 'code and secret are required');
    const state = await this.state(userId);
    const challenge = findChallenge(state, hashKey(secret));
    const proof = this.proof(state, {
      tfa_method: challenge?.channel === 'totp' ? 'totp' : challenge?.channel === 'sms' ? 'sms' : 'email',
      code,
      secret,
      tfa_method_id: challenge?.methodId ?? undefined,
    });
    await this.run(
      userId,
      (now) => ({ type: 'ConfirmAuthorization', userId, secretHash: hashKey(secret), proof, now }),
      metadata,
    );
    return { success: true, msg: 'Authorization successful.' };
  }

  async completeLogin(
    caller: TfaCaller,
    input: LoginRequest,
    metadata: EventMetadata,
  ): Promise<{ body: Record<string, unknown>; sessionKey: string }> {
    const userId = caller.userId;
    if (input.admin && !(await this.user(userId)).is_admin)
      throw ApiError.forbidden('Only administrators can request an admin session');
    const state = await this.state(userId);
    const proof = this.proof(state, input);
    const sessionKeyId = await this.runtime.nextId('api_key_ids');
    await this.run(userId, (now) => ({ type: 'CompleteLogin', userId, proof, sessionKeyId, now }), metadata);
    const sessionKey = await issueSessionKey(
      this.runtime,
      this.options,
      { keyId: sessionKeyId, userId, name: input.admin ? 'admin session' : 'session', scope: caller.scope },
      metadata,
    );
    const after = await this.state(userId);
    const user: UserView = toUserView(await this.user(userId));
    const body: Record<string, unknown> = { ...user, success: true };
    const remaining = after.backup.filter((b) => !b.used).length;
    if (proof.kind === 'backup' && remaining > 0) body.backup_codes_remaining = remaining;
    if (after.legacy) body.legacy_tfa_user = true;
    return { body, sessionKey };
  }
}
