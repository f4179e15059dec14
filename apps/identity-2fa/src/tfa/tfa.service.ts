import { Inject, Injectable } from '@nestjs/common';
import { ApiError, type EventMetadata, isRefusal, type KeyScope } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { apiKeyDecider, apiKeyStreamId } from '../api-keys/api-key.decider';
import { SCHEMA } from '../schema';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions, sessionExpiry } from '../identity.tokens';
import { MAILER, type Mailer } from '../mailer';
import { newKeyValue } from '../secrets';
import { type UserView, findUser, toUserView } from '../users/users.handlers';
import { SMS_SENDER, type SmsSender } from './sms';
import {
  SecretBox,
  hashBackupCode,
  hashCode,
  newBackupCode,
  newCode,
  newTfaSecret,
  newTotpSecret,
  provisioningUri,
  totpStep,
} from './tfa.crypto';
import { type TfaCommand, tfaDecider, tfaStreamId } from './tfa.decider';
import type {
  AuthorizeRequest,
  ConfirmNewRequest,
  LoginRequest,
  ProofRequest,
  RemoveRequest,
  UpdateRequest,
} from './tfa.dto';
import { methodView } from './methods.decider';
import { TFA_LIMITS, type TfaState } from './tfa.state';
import { type Proof, failureError, findChallenge } from './verification.decider';
import type { TfaEvent, TfaPurpose } from './tfa.events';

export const TFA_SECRET_BOX = Symbol('TFA_SECRET_BOX');

/** The caller of a /tfa/ route: a bearer key, or a logged-out holder of a tfa_secret. */
export interface TfaCaller {
  userId: number;
  /** Null for a logged-out caller (secret only). */
  keyId: number | null;
  /** The bearer key's scope (null: full access, as for a logged-out caller); a 2FA session inherits it. */
  scope: KeyScope;
}

const epoch = (date: Date): number => Math.floor(date.getTime() / 1000);

/**
 * The 2FA application service: loads the user's 2FA stream, does the slow or secret work the pure
 * decider must not (TOTP maths with the decrypted secret, hashing, random codes), runs the decider
 * through the command runner, and delivers codes after the events are stored.
 */
@Injectable()
export class TfaService {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(SMS_SENDER) private readonly sms: SmsSender,
    @Inject(TFA_SECRET_BOX) private readonly box: SecretBox,
    @Inject(IDENTITY_OPTIONS) private readonly options: IdentityOptions,
  ) {}

  private now(): Date {
    return this.runtime.runner.clock.now();
  }

  async state(userId: number): Promise<TfaState> {
    const { state } = await this.runtime.runner.load(tfaStreamId(userId), tfaDecider);
    return { ...state, userId };
  }

  /** Runs one command; a recorded verification failure is stored, then answered as an error. */
  private async run(
    userId: number,
    build: (now: string) => TfaCommand,
    metadata: EventMetadata,
  ): Promise<TfaEvent[]> {
    const result = await this.runtime.runner.handle(
      tfaStreamId(userId),
      tfaDecider,
      (state, now) => tfaDecider.decide(build(now.toISOString()), state),
      metadata,
    );
    const events = result.decided;
    for (const event of events) {
      const error = failureError(event);
      if (error) throw error;
    }
    return events;
  }

  private async user(userId: number) {
    const row = await findUser(this.runtime, 'user_id = $1', userId);
    if (!row) throw new ApiError(403, 'auth_error', 'No valid authentication');
    return row;
  }

  private async nextId(sequence: string): Promise<number> {
    return this.runtime.nextId(sequence);
  }

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

  /** Builds the proof; TOTP codes are checked here against every TOTP method's decrypted secret. */
  private proof(state: TfaState, input: ProofRequest): Proof {
    if (input.backup_code) return { kind: 'backup', codeHash: hashBackupCode(input.backup_code) };
    if (!input.code) throw new ApiError(400, 'missing_auth_value', 'code or backup_code is required');
    const method = input.tfa_method ?? 'sms';
    if (method === 'totp') {
      const at = this.now();
      const matches: Record<number, number | null> = {};
      for (const m of state.methods) {
        if (m.method === 'totp' && m.secretEnc)
          matches[m.id] = totpStep(this.box.open(m.secretEnc), input.code, at);
      }
      return { kind: 'totp', methodId: input.tfa_method_id ?? null, matches };
    }
    return {
      kind: 'code',
      channel: method,
      secretHash: input.secret ? hashKey(input.secret) : null,
      codeHash: hashCode(input.code),
      methodId: input.tfa_method_id ?? null,
    };
  }

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

  private async deliverSms(
    userId: number,
    to: string,
    code: string,
    secretHash: string,
    metadata: EventMetadata,
  ): Promise<void> {
    try {
      await this.sms.send(to, `Your Rigmarket verification code is ${code}. It expires in 10 minutes.`);
    } catch (error) {
      // Not delivered: the challenge must not block a new request (tfa_challenge_exists).
      await this.run(
        userId,
        () => ({ type: 'CancelChallenge', userId, secretHash, reason: 'delivery_failed' }),
        metadata,
      );
      if (isRefusal(error)) throw error;
      throw new ApiError(400, 'twilio_error', 'SMS delivery failed');
    }
  }

  private async deliverEmail(to: string, code: string): Promise<void> {
    await this.mailer.send({
      to,
      subject: 'Your Rigmarket 2FA code',
      text: `Your Rigmarket 2FA code is ${code}\nIt expires in 10 minutes. If you did not ask for it, change your password.`,
    });
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

  async totpSetup(userId: number) {
    const row = await this.user(userId);
    const secret = newTotpSecret();
    return { success: true, secret, provisioning_uri: provisioningUri(secret, row.email) };
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

  async confirmNew(userId: number, input: ConfirmNewRequest, metadata: EventMetadata) {
    const method = input.tfa_method;
    if (method === 'email')
      throw new ApiError(400, 'invalid_tfa_method', 'E-mail cannot be stored as a method: use sms or totp');
    if (!input.code || !input.secret)
      throw new ApiError(400, 'missing_params', 'code and secret are required');
    const methodId = await this.nextId('tfa_method_ids');
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
    const sessionKeyId = await this.nextId('api_key_ids');
    await this.run(userId, (now) => ({ type: 'CompleteLogin', userId, proof, sessionKeyId, now }), metadata);
    const sessionKey = newKeyValue();
    await this.runtime.runner.handle(
      apiKeyStreamId(sessionKeyId),
      apiKeyDecider,
      (current, now) =>
        apiKeyDecider.decide(
          {
            type: 'CreateApiKey',
            keyId: sessionKeyId,
            userId,
            name: input.admin ? 'admin session' : 'session',
            keyHash: hashKey(sessionKey),
            permissions: caller.scope,
            kind: 'session',
            now: now.toISOString(),
            expiresAt: sessionExpiry(now, this.options),
          },
          current,
        ),
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
    const backfillMethodId = await this.nextId('tfa_method_ids');
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

  /** Seconds since the epoch of the runtime clock (tests compare locked_until with it). */
  nowEpoch(): number {
    return epoch(this.now());
  }
}
