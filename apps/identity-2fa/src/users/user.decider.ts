import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '@rigmarket/contracts';
import type { UserEvent } from './user.events';

export type UserState =
  | { status: 'none' }
  | {
      status: 'registered';
      userId: number;
      email: string;
      passwordHash: string | null;
      emailVerified: boolean;
      pendingVerification: { tokenHash: string; expiresAt: string } | null;
    };

export type UserCommand = { at: string } & (
  | {
      type: 'RegisterUser';
      userId: number;
      email: string;
      username: string | null;
      fullName: string | null;
      passwordHash: string | null;
      isAdmin: boolean;
      /** Set for the seeded admin: its e-mail counts as verified. */
      preVerified: boolean;
      verification: { tokenHash: string; expiresAt: string } | null;
    }
  | { type: 'VerifyEmail'; tokenHash: string }
  | { type: 'RecordLogin'; passwordMatches: boolean; sessionKeyId: number }
  /** The new hash is computed (scrypt, random salt) before the decider runs; the old password checked too. */
  | { type: 'ChangePassword'; oldPasswordMatches: boolean; passwordHash: string }
);

export const UserErrors = {
  exists: 'user_exists',
  notFound: 'user_not_found',
  invalidToken: 'invalid_verification_token',
  tokenExpired: 'verification_token_expired',
  invalidCredentials: 'invalid_credentials',
  wrongPassword: 'wrong_password',
} as const;

export const initialState = (): UserState => ({ status: 'none' });

export function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered':
      return {
        status: 'registered',
        userId: event.data.userId,
        email: event.data.email,
        passwordHash: null,
        emailVerified: false,
        pendingVerification: null,
      };
    case 'UserPasswordSet':
      return state.status === 'registered' ? { ...state, passwordHash: event.data.passwordHash } : state;
    case 'UserEmailVerificationRequested':
      return state.status === 'registered'
        ? {
            ...state,
            pendingVerification: { tokenHash: event.data.tokenHash, expiresAt: event.data.expiresAt },
          }
        : state;
    case 'UserEmailVerified':
      return state.status === 'registered'
        ? { ...state, emailVerified: true, pendingVerification: null }
        : state;
    default:
      return state;
  }
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function decide(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser': {
      if (state.status !== 'none') throw new DomainError(UserErrors.exists, 'This user already exists');
      const events: UserEvent[] = [
        {
          type: 'UserRegistered',
          data: {
            userId: command.userId,
            email: command.email,
            username: command.username,
            fullName: command.fullName,
            isAdmin: command.isAdmin,
            registeredAt: command.at,
          },
        },
      ];
      if (command.passwordHash) {
        events.push({
          type: 'UserPasswordSet',
          data: { userId: command.userId, passwordHash: command.passwordHash },
        });
      }
      if (command.preVerified) {
        events.push({ type: 'UserEmailVerified', data: { userId: command.userId, verifiedAt: command.at } });
      } else if (command.verification) {
        events.push({
          type: 'UserEmailVerificationRequested',
          data: { userId: command.userId, ...command.verification },
        });
      }
      return events;
    }
    case 'VerifyEmail': {
      if (state.status !== 'registered') throw new DomainError(UserErrors.notFound, 'No such user');
      if (state.emailVerified) return [];
      const pending = state.pendingVerification;
      if (!pending || !sameHash(pending.tokenHash, command.tokenHash)) {
        throw new DomainError(UserErrors.invalidToken, 'The verification code is not valid for this account');
      }
      if (new Date(command.at) > new Date(pending.expiresAt)) {
        throw new DomainError(
          UserErrors.tokenExpired,
          'The verification code has expired; register again or ask for a new one',
        );
      }
      return [{ type: 'UserEmailVerified', data: { userId: state.userId, verifiedAt: command.at } }];
    }
    case 'RecordLogin': {
      if (state.status !== 'registered' || !state.passwordHash || !command.passwordMatches) {
        throw new DomainError(UserErrors.invalidCredentials, 'Invalid e-mail or password');
      }
      return [
        {
          type: 'UserLoggedIn',
          data: { userId: state.userId, sessionKeyId: command.sessionKeyId, at: command.at },
        },
      ];
    }
    case 'ChangePassword': {
      if (state.status !== 'registered') throw new DomainError(UserErrors.notFound, 'No such user');
      if (!state.passwordHash || !command.oldPasswordMatches) {
        throw new DomainError(UserErrors.wrongPassword, 'The current password is not correct');
      }
      return [
        { type: 'UserPasswordSet', data: { userId: state.userId, passwordHash: command.passwordHash } },
      ];
    }
  }
}

export const userDecider = { initialState, evolve, decide };
export const userStreamId = (userId: number): string => `user-${userId}`;
