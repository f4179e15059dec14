import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import { type ContextRuntime, isUniqueViolation } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { apiKeyDecider, apiKeyStreamId } from '../api-keys/api-key.decider';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions } from '../identity.tokens';
import { SCHEMA } from '../schema';
import { MAILER, type Mailer } from '../mailer';
import { hashPassword, newVerificationToken, verifyPassword } from '../secrets';
import { newTfaSecret } from '../tfa/tfa.crypto';
import { tfaDecider, tfaStreamId } from '../tfa/tfa.decider';
import { LOGIN_THROTTLE, type LoginThrottle } from './login-throttle';
import { userDecider, userStreamId } from './user.decider';
import { issueSessionKey } from '../api-keys/session-key';
import { type UserView, findSubaccounts, findUser, toUserView } from '../read-models/users/queries';
import type { UserSettings } from './user.events';

export class RegisterUserCommand extends Command<{ user: UserView }> {
  constructor(
    readonly email: string,
    readonly password: string,
    readonly username: string | null,
    readonly fullName: string | null,
    readonly metadata: EventMetadata,
    /** A subaccount: the calling account becomes its parent. */
    readonly parent: { userId: number; hostOnly: boolean } | null = null,
  ) {
    super();
  }
}

/** How many subaccounts one account may hold. */
export const MAX_SUBACCOUNTS = 100;

@CommandHandler(RegisterUserCommand)
export class RegisterUserHandler implements ICommandHandler<RegisterUserCommand> {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(IDENTITY_OPTIONS) private readonly options: IdentityOptions,
  ) {}

  async execute(command: RegisterUserCommand): Promise<{ user: UserView }> {
    if (command.parent) await this.checkParent(command.parent.userId);
    const userId = await this.runtime.nextId('user_ids');
    const token = newVerificationToken();
    // Slow and random, so computed before the pure decider runs.
    const passwordHash = await hashPassword(command.password);
    try {
      await this.runtime.runner.run(
        userStreamId(userId),
        userDecider,
        {
          type: 'RegisterUser',
          userId,
          email: command.email,
          username: command.username,
          fullName: command.fullName,
          passwordHash,
          isAdmin: false,
          preVerified: false,
          parent: command.parent,
          verification: {
            tokenHash: hashKey(token),
            expiresAt: new Date(
              this.runtime.runner.clock.now().getTime() + (this.options.verificationTtlMs ?? 24 * 3600_000),
            ).toISOString(),
          },
        },
        command.metadata,
      );
    } catch (error) {
      if (isUniqueViolation(error, 'users_email_unique')) {
        throw ApiError.conflict('An account with this e-mail address already exists', 'email_taken');
      }
      throw error;
    }
    await this.mailer.send({
      to: command.email,
      subject: 'Verify your Rigmarket e-mail address',
      text: `Your verification code is ${token}\nSubmit it to POST /api/v0/users/verify_email/ with your e-mail address.`,
    });
    const row = await findUser(this.runtime, 'user_id = $1', userId);
    return { user: toUserView(row!) };
  }

  /** A subaccount's parent is a top-level account with room for one more. */
  private async checkParent(parentId: number): Promise<void> {
    const parent = await findUser(this.runtime, 'user_id = $1', parentId);
    if (!parent) throw ApiError.notFound('User not found');
    if (parent.parent_id !== null && parent.parent_id !== undefined) {
      throw ApiError.forbidden('A subaccount cannot create subaccounts of its own');
    }
    const [count] = await this.runtime.db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${SCHEMA}.users WHERE parent_id = $1`,
      [parentId],
    );
    if (Number(count?.n ?? 0) >= MAX_SUBACCOUNTS) {
      throw ApiError.conflict(
        `An account holds at most ${MAX_SUBACCOUNTS} subaccounts`,
        'too_many_subaccounts',
      );
    }
  }
}

export class VerifyEmailCommand extends Command<{ user: UserView }> {
  constructor(
    readonly email: string,
    readonly code: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(VerifyEmailCommand)
export class VerifyEmailHandler implements ICommandHandler<VerifyEmailCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: VerifyEmailCommand): Promise<{ user: UserView }> {
    const row = await findUser(this.runtime, 'lower(email) = lower($1)', command.email);
    if (!row)
      throw new ApiError(
        400,
        'invalid_verification_token',
        'The verification code is not valid for this account',
      );
    await this.runtime.runner.run(
      userStreamId(Number(row.user_id)),
      userDecider,
      { type: 'VerifyEmail', tokenHash: hashKey(command.code) },
      command.metadata,
    );
    return { user: toUserView((await findUser(this.runtime, 'user_id = $1', row.user_id))!) };
  }
}

export type LoginResult =
  | { user: UserView; sessionKey: string; tfaSecret: null }
  /** 2FA is on: no session yet, a tfa_secret to complete the login on /api/v0/tfa/. */
  | { user: UserView; sessionKey: null; tfaSecret: string };

export class LoginCommand extends Command<LoginResult> {
  constructor(
    readonly login: string,
    readonly password: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/**
 * Password login. A session is a key of kind 'session' (usable as a bearer like any key).
 * The 2FA step (issue: identity-2fa) slots in between the password check and the session key.
 */
@CommandHandler(LoginCommand)
export class LoginHandler implements ICommandHandler<LoginCommand> {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(IDENTITY_OPTIONS) private readonly options: IdentityOptions,
    @Inject(LOGIN_THROTTLE) private readonly throttle: LoginThrottle,
  ) {}

  async execute(command: LoginCommand): Promise<LoginResult> {
    // A locked login is refused before any password work.
    await this.throttle.check(command.login);
    const row = await findUser(this.runtime, 'lower(email) = lower($1) OR username = $1', command.login);
    const streamId = userStreamId(row ? Number(row.user_id) : 0);
    const { state } = await this.runtime.runner.load(streamId, userDecider);
    const passwordMatches = await verifyPassword(
      command.password,
      state.status === 'registered' ? state.passwordHash : null,
    );
    if (
      passwordMatches &&
      row &&
      state.status === 'registered' &&
      state.passwordHash &&
      row.tfa_status &&
      row.tfa_status !== 'disabled'
    ) {
      // The 2FA step: a challenge instead of a session; POST /api/v0/tfa/ completes the login.
      const tfaSecret = newTfaSecret();
      const userId = Number(row.user_id);
      await this.runtime.runner.handle(
        tfaStreamId(userId),
        tfaDecider,
        (current, now) =>
          tfaDecider.decide(
            { type: 'IssueLoginChallenge', userId, secretHash: hashKey(tfaSecret), now: now.toISOString() },
            current,
          ),
        command.metadata,
      );
      await this.throttle.succeeded(command.login);
      return { user: toUserView(row), sessionKey: null, tfaSecret };
    }
    const sessionKeyId = await this.runtime.nextId('api_key_ids');
    await this.runtime.runner
      .run(streamId, userDecider, { type: 'RecordLogin', passwordMatches, sessionKeyId }, command.metadata)
      .catch(async (error: unknown) => {
        if (!passwordMatches) await this.throttle.failed(command.login);
        throw error;
      });
    await this.throttle.succeeded(command.login);
    const sessionKey = await issueSessionKey(
      this.runtime,
      this.options,
      { keyId: sessionKeyId, userId: Number(row!.user_id), name: 'session', scope: null },
      command.metadata,
    );
    return { user: toUserView(row!), sessionKey, tfaSecret: null };
  }
}

/** Ends sessions: ApiKeyDeleted for each (the keys stop authenticating in every app). */
async function revokeSessions(
  runtime: ContextRuntime,
  userId: number,
  keyIds: readonly number[],
  metadata: EventMetadata,
): Promise<void> {
  for (const keyId of keyIds) {
    await runtime.runner.run(
      apiKeyStreamId(keyId),
      apiKeyDecider,
      { type: 'DeleteApiKey', requesterUserId: userId },
      metadata,
    );
  }
}

export class LogoutCommand extends Command<{ revoked: number }> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
    readonly keyKind: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** POST /api/v0/users/logout/: the calling session ends (an API key is deleted through the key routes instead). */
@CommandHandler(LogoutCommand)
export class LogoutHandler implements ICommandHandler<LogoutCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: LogoutCommand): Promise<{ revoked: number }> {
    if (command.keyKind !== 'session') {
      throw new ApiError(
        400,
        'not_a_session',
        'This key is not a login session: delete an API key with DELETE /api/v0/auth/apikeys/{id}/',
      );
    }
    await revokeSessions(this.runtime, command.userId, [command.keyId], command.metadata);
    return { revoked: 1 };
  }
}

export class ChangePasswordCommand extends Command<{ revoked: number }> {
  constructor(
    readonly userId: number,
    readonly oldPassword: string,
    readonly newPassword: string,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** PUT /api/v0/users/password/: checks the current password, sets the new one, and ends every session of the account. */
@CommandHandler(ChangePasswordCommand)
export class ChangePasswordHandler implements ICommandHandler<ChangePasswordCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: ChangePasswordCommand): Promise<{ revoked: number }> {
    const streamId = userStreamId(command.userId);
    const { state } = await this.runtime.runner.load(streamId, userDecider);
    const oldPasswordMatches = await verifyPassword(
      command.oldPassword,
      state.status === 'registered' ? state.passwordHash : null,
    );
    const passwordHash = await hashPassword(command.newPassword);
    await this.runtime.runner.run(
      streamId,
      userDecider,
      { type: 'ChangePassword', oldPasswordMatches, passwordHash },
      command.metadata,
    );
    const sessions = await this.runtime.db.query<{ key_id: number }>(
      `SELECT key_id FROM ${SCHEMA}.api_keys WHERE user_id = $1 AND kind = 'session' AND deleted_at IS NULL ORDER BY key_id`,
      [command.userId],
    );
    await revokeSessions(
      this.runtime,
      command.userId,
      sessions.map((row) => Number(row.key_id)),
      command.metadata,
    );
    return { revoked: sessions.length };
  }
}

export class UpdateUserCommand extends Command<UserView> {
  constructor(
    readonly userId: number,
    readonly changes: { fullName?: string | null; sshKey?: string | null; settings: UserSettings },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** PUT /api/v0/users/ (`vastai set user`): the fields given change; the answer is the account as it is now. */
@CommandHandler(UpdateUserCommand)
export class UpdateUserHandler implements ICommandHandler<UpdateUserCommand> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(command: UpdateUserCommand): Promise<UserView> {
    await this.runtime.runner.run(
      userStreamId(command.userId),
      userDecider,
      { type: 'UpdateUser', ...command.changes },
      command.metadata,
    );
    const row = await findUser(this.runtime, 'user_id = $1', command.userId);
    if (!row) throw ApiError.notFound('User not found');
    return toUserView(row);
  }
}

export class ListSubaccountsQuery extends Query<UserView[]> {
  constructor(readonly parentId: number) {
    super();
  }
}

@QueryHandler(ListSubaccountsQuery)
export class ListSubaccountsHandler implements IQueryHandler<ListSubaccountsQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(query: ListSubaccountsQuery): Promise<UserView[]> {
    const rows = await findSubaccounts(this.runtime, query.parentId, MAX_SUBACCOUNTS);
    return rows.map(toUserView);
  }
}

export class GetUserQuery extends Query<UserView> {
  constructor(readonly userId: number) {
    super();
  }
}

@QueryHandler(GetUserQuery)
export class GetUserHandler implements IQueryHandler<GetUserQuery> {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute(query: GetUserQuery): Promise<UserView> {
    const row = await findUser(this.runtime, 'user_id = $1', query.userId);
    if (!row) throw ApiError.notFound('User not found');
    return toUserView(row);
  }
}
