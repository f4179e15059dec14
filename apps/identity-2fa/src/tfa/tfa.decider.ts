import type { TfaEvent } from './tfa.events';
import { type TfaState, evolve, initialState } from './tfa.state';
import { type AuthorizationCommand, confirmAuthorization, startAuthorization } from './authorization.decider';
import {
  type ChallengeCommand,
  cancelChallenge,
  completeLogin,
  issueLoginChallenge,
  resendSmsCode,
  sendEmailCode,
  sendSmsCode,
} from './challenges.decider';
import {
  type MethodCommand,
  confirmNewMethod,
  markLegacy,
  regenerateBackupCodes,
  removeMethod,
  updateMethod,
} from './methods.decider';

/**
 * The decider of a user's 2FA stream (`tfa-<userId>`): state and evolve in tfa.state.ts, one function per
 * command in challenges.decider.ts (login and code challenges, SMS limits), authorization.decider.ts (the
 * add-method window) and methods.decider.ts (methods, backup codes, legacy accounts); proofs are checked by
 * verification.decider.ts.
 */
export type TfaCommand = ChallengeCommand | AuthorizationCommand | MethodCommand;

export function decide(command: TfaCommand, current: TfaState): TfaEvent[] {
  const state: TfaState = { ...current, userId: command.userId };
  switch (command.type) {
    case 'IssueLoginChallenge':
      return issueLoginChallenge(command, state);
    case 'SendEmailCode':
      return sendEmailCode(command, state);
    case 'SendSmsCode':
      return sendSmsCode(command, state);
    case 'ResendSmsCode':
      return resendSmsCode(command, state);
    case 'CancelChallenge':
      return cancelChallenge(command, state);
    case 'CompleteLogin':
      return completeLogin(command, state);
    case 'StartAuthorization':
      return startAuthorization(command, state);
    case 'ConfirmAuthorization':
      return confirmAuthorization(command, state);
    case 'ConfirmNewMethod':
      return confirmNewMethod(command, state);
    case 'RemoveMethod':
      return removeMethod(command, state);
    case 'UpdateMethod':
      return updateMethod(command, state);
    case 'RegenerateBackupCodes':
      return regenerateBackupCodes(command, state);
    case 'MarkLegacy':
      return markLegacy(command, state);
  }
}

export const tfaDecider = { initialState, evolve, decide };
export const tfaStreamId = (userId: number): string => `tfa-${userId}`;
