import type { ChallengeFields, MethodType, TfaEvent, TfaPurpose } from './tfa.events';

// The folded state of a user's 2FA stream (`tfa-<userId>`) and the limits the deciders apply to it.

/** Windows and thresholds; docs/tfa.md explains the choices. */
export const TFA_LIMITS = {
  challengeTtlMs: 10 * 60_000,
  lockoutMs: 15 * 60_000,
  authorizationMs: 30 * 60_000,
  /** The failure that reaches this count locks the method. */
  maxFailures: 5,
  /** SMS codes (sends and resends) per user per rolling hour. */
  smsPerHour: 5,
  /** Set-up / authorization challenges to one phone number per user per rolling 24 hours. */
  preauthPerPhonePerDay: 3,
  backupCodes: 10,
  labelMax: 30,
} as const;

export interface TfaMethod {
  id: number;
  method: MethodType;
  label: string | null;
  phone: string | null;
  secretEnc: string | null;
  isPrimary: boolean;
  createdAt: string;
  lastUsed: string | null;
  lastStep: number;
}

export interface Challenge extends ChallengeFields {
  issuedAt: string;
  expiresAt: string;
  active: boolean;
}

export interface Lock {
  failCount: number;
  lockedUntil: string | null;
}

export interface TfaState {
  userId: number;
  enabled: boolean;
  legacy: boolean;
  legacyPhone: string | null;
  methods: TfaMethod[];
  backup: { hash: string; used: boolean }[];
  challenges: Challenge[];
  locks: Record<string, Lock>;
  authorizedUntil: string | null;
  smsLog: { at: string; phone: string; purpose: TfaPurpose }[];
}

export const initialState = (): TfaState => ({
  userId: 0,
  enabled: false,
  legacy: false,
  legacyPhone: null,
  methods: [],
  backup: [],
  challenges: [],
  locks: {},
  authorizedUntil: null,
  smsLog: [],
});

export function evolve(state: TfaState, event: TfaEvent): TfaState {
  const s: TfaState = { ...state, userId: event.data.userId };
  switch (event.type) {
    case 'TfaChallengeIssued': {
      const d = event.data;
      const challenge: Challenge = {
        secretHash: d.secretHash,
        channel: d.channel,
        purpose: d.purpose,
        codeHash: d.codeHash,
        phone: d.phone,
        methodId: d.methodId,
        loggedOut: d.loggedOut,
        issuedAt: d.issuedAt,
        expiresAt: d.expiresAt,
        active: true,
      };
      const smsLog =
        d.channel === 'sms' && d.phone
          ? [...s.smsLog, { at: d.issuedAt, phone: d.phone, purpose: d.purpose }]
          : s.smsLog;
      // Challenges and the SMS log matter for a day at most (the longest rate window): older entries are
      // dropped so the folded state of a long-lived account stays small.
      const horizon = ms(d.issuedAt) - 24 * 3600_000;
      return {
        ...s,
        challenges: [...s.challenges.filter((c) => ms(c.expiresAt) > horizon), challenge],
        smsLog: smsLog.filter((e) => ms(e.at) > horizon),
      };
    }
    case 'TfaChallengeCodeReplaced': {
      const d = event.data;
      const old = s.challenges.find((c) => c.secretHash === d.oldSecretHash);
      return {
        ...s,
        challenges: s.challenges.map((c) =>
          c.secretHash === d.oldSecretHash
            ? {
                ...c,
                secretHash: d.secretHash,
                codeHash: d.codeHash,
                issuedAt: d.issuedAt,
                expiresAt: d.expiresAt,
              }
            : c,
        ),
        smsLog: old?.phone
          ? [...s.smsLog, { at: d.issuedAt, phone: old.phone, purpose: old.purpose }]
          : s.smsLog,
      };
    }
    case 'TfaChallengeCancelled':
      return {
        ...s,
        challenges: s.challenges.map((c) =>
          c.secretHash === event.data.secretHash ? { ...c, active: false } : c,
        ),
      };
    case 'TfaVerificationFailed':
      return {
        ...s,
        locks: {
          ...s.locks,
          [String(event.data.lockKey)]: {
            failCount: event.data.failCount,
            lockedUntil: event.data.lockedUntil,
          },
        },
      };
    case 'TfaVerificationSucceeded': {
      const d = event.data;
      return {
        ...s,
        locks: { ...s.locks, [String(d.lockKey)]: { failCount: 0, lockedUntil: null } },
        challenges: s.challenges.map((c) =>
          d.secretHash !== null && c.secretHash === d.secretHash ? { ...c, active: false } : c,
        ),
        methods: s.methods.map((m) =>
          m.id === d.lockKey
            ? {
                ...m,
                lastUsed: d.at,
                lastStep: d.totpStep !== null ? Math.max(m.lastStep, d.totpStep) : m.lastStep,
              }
            : m,
        ),
      };
    }
    case 'TfaBackupCodeUsed':
      return { ...s, backup: s.backup.map((b, i) => (i === event.data.index ? { ...b, used: true } : b)) };
    case 'TfaNewMethodAuthorized':
      return { ...s, authorizedUntil: event.data.until };
    case 'TfaMethodAdded': {
      const d = event.data;
      const method: TfaMethod = {
        id: d.methodId,
        method: d.method,
        label: d.label,
        phone: d.phone,
        secretEnc: d.secretEnc,
        isPrimary: d.isPrimary,
        createdAt: d.at,
        lastUsed: null,
        lastStep: d.totpStep ?? -1,
      };
      // A method row (the legacy backfill included) ends the legacy state.
      return {
        ...s,
        enabled: true,
        legacy: false,
        legacyPhone: null,
        methods: [...s.methods.map((m) => (d.isPrimary ? { ...m, isPrimary: false } : m)), method],
      };
    }
    case 'TfaBackupCodesIssued':
      return { ...s, backup: event.data.hashes.map((hash) => ({ hash, used: false })) };
    case 'TfaMethodUpdated': {
      const d = event.data;
      return {
        ...s,
        methods: s.methods.map((m) => {
          if (m.id === d.methodId) {
            return {
              ...m,
              label: d.label !== undefined ? d.label : m.label,
              isPrimary: d.isPrimary ?? m.isPrimary,
            };
          }
          return d.isPrimary ? { ...m, isPrimary: false } : m;
        }),
      };
    }
    case 'TfaMethodRemoved':
      return { ...s, methods: s.methods.filter((m) => m.id !== event.data.methodId) };
    case 'TfaDisabled':
      return {
        ...s,
        enabled: false,
        legacy: false,
        legacyPhone: null,
        methods: [],
        backup: [],
        authorizedUntil: null,
      };
    case 'TfaLegacyMarked':
      return { ...s, enabled: true, legacy: true, legacyPhone: event.data.phone };
    case 'TfaLoginCompleted':
      return { ...s, challenges: s.challenges.map((c) => (c.loggedOut ? { ...c, active: false } : c)) };
    default:
      return s;
  }
}

/** Whether the add-method window (TfaNewMethodAuthorized) is open. */
export function authorized(state: TfaState, now: string): boolean {
  return state.authorizedUntil !== null && ms(state.authorizedUntil) > ms(now);
}

export const ms = (iso: string): number => new Date(iso).getTime();
export const plus = (iso: string, delta: number): string => new Date(ms(iso) + delta).toISOString();
export const epochSeconds = (iso: string | null): number | null =>
  iso === null ? null : Math.floor(ms(iso) / 1000);
