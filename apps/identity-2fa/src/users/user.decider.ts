import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '@rigmarket/contracts';
import type { UserEvent, UserSettings } from './user.events';

export type UserState =
  | { status: 'none' }
  | {
      status: 'registered';
      userId: number;
      email: string;
      passwordHash: string | null;
      emailVerified: boolean;
      pendingVerification: { tokenHash: string; expiresAt: string } | null;
      fullName: string | null;
      sshKey: string | null;
      settings: UserSettings;
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
      /** Set for a subaccount: the account that created it, and whether it may only host. */
      parent?: { userId: number; hostOnly: boolean } | null;
    }
  | { type: 'VerifyEmail'; tokenHash: string }
  | { type: 'RecordLogin'; passwordMatches: boolean; sessionKeyId: number }
  /** The new hash is computed (scrypt, random salt) before the decider runs; the old password checked too. */
  | { type: 'ChangePassword'; oldPasswordMatches: boolean; passwordHash: string }
  /** `vastai set user`: only the fields given change; a field set to its current value is no change. */
  | { type: 'UpdateUser'; fullName?: string | null; sshKey?: string | null; settings: UserSettings }
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
        fullName: event.data.fullName,
        sshKey: null,
        settings: {},
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
    case 'UserProfileUpdated':
      if (state.status !== 'registered') return state;
      return {
        ...state,
        fullName: event.data.fullName !== undefined ? event.data.fullName : state.fullName,
        sshKey: event.data.sshKey !== undefined ? event.data.sshKey : state.sshKey,
      };
    case 'UserSettingsChanged':
      return state.status === 'registered'
        ? { ...state, settings: { ...state.settings, ...event.data.settings } }
        : state;
    default:
      return state;
  }
}

/** The settings among `wanted` that differ from `current`. */
function changedSettings(current: UserSettings, wanted: UserSettings): UserSettings {
  const changed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(wanted)) {
    if (value !== undefined && current[name as keyof UserSettings] !== value) changed[name] = value;
  }
  return changed as UserSettings;
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
      if (command.parent) {
        events.push({
          type: 'SubaccountRegistered',
          data: {
            userId: command.userId,
            parentId: command.parent.userId,
            hostOnly: command.parent.hostOnly,
          },
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
    case 'UpdateUser': {
      if (state.status !== 'registered') throw new DomainError(UserErrors.notFound, 'No such user');
      const events: UserEvent[] = [];
      const profile: { fullName?: string | null; sshKey?: string | null } = {};
      if (command.fullName !== undefined && command.fullName !== state.fullName)
        profile.fullName = command.fullName;
      if (command.sshKey !== undefined && command.sshKey !== state.sshKey) profile.sshKey = command.sshKey;
      if (Object.keys(profile).length > 0) {
        events.push({ type: 'UserProfileUpdated', data: { userId: state.userId, ...profile } });
      }
      const settings = changedSettings(state.settings, command.settings);
      if (Object.keys(settings).length > 0) {
        events.push({ type: 'UserSettingsChanged', data: { userId: state.userId, settings } });
      }
      return events;
    }
  }
}

/**
 * The stream grows with use (every login adds an event), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const userDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const userStreamId = (userId: number): string => `user-${userId}`;
