import { Inject } from '@nestjs/common';
import { ApiError, type EventMetadata, isRefusal, type KeyScope } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions } from '../identity.tokens';
import { MAILER, type Mailer } from '../mailer';
import { type UserRow, findUser } from '../read-models/users/queries';
import { SMS_SENDER, type SmsSender } from './sms';
import { SecretBox, hashBackupCode, hashCode, totpStep } from './tfa.crypto';
import { type TfaCommand, tfaDecider, tfaStreamId } from './tfa.decider';
import type { ProofRequest } from './tfa.dto';
import type { TfaEvent } from './tfa.events';
import type { TfaState } from './tfa.state';
import { type Proof, failureError } from './verification.decider';

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
 * The I/O both 2FA services share (TfaService: challenges and logins; TfaMethodsService: methods and backup
 * codes): folding the user's stream, running a command through the command runner, the slow or secret work
 * the pure decider must not do (TOTP maths with the decrypted secret, hashing), and delivering codes.
 */
export abstract class TfaIo {
  constructor(
    @Inject(IDENTITY_RUNTIME) protected readonly runtime: ContextRuntime,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(SMS_SENDER) private readonly sms: SmsSender,
    @Inject(TFA_SECRET_BOX) protected readonly box: SecretBox,
    @Inject(IDENTITY_OPTIONS) protected readonly options: IdentityOptions,
  ) {}

  protected now(): Date {
    return this.runtime.runner.clock.now();
  }

  async state(userId: number): Promise<TfaState> {
    const { state } = await this.runtime.runner.load(tfaStreamId(userId), tfaDecider);
    return { ...state, userId };
  }

  /** Runs one command; a recorded verification failure is stored, then answered as an error. */
  protected async run(
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

  protected async user(userId: number): Promise<UserRow> {
    const row = await findUser(this.runtime, 'user_id = $1', userId);
    if (!row) throw new ApiError(403, 'auth_error', 'No valid authentication');
    return row;
  }

  /** Builds the proof; TOTP codes are checked here against every TOTP method's decrypted secret. */
  protected proof(state: TfaState, input: ProofRequest): Proof {
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

  protected async deliverSms(
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

  protected async deliverEmail(to: string, code: string): Promise<void> {
    await this.mailer.send({
      to,
      subject: 'Your Rigmarket 2FA code',
      text: `Your Rigmarket 2FA code is ${code}\nIt expires in 10 minutes. If you did not ask for it, change your password.`,
    });
  }

  /** Seconds since the epoch of the runtime clock (tests compare locked_until with it). */
  nowEpoch(): number {
    return epoch(this.now());
  }
}
