import { ApiError, type LedgerEvent } from '@rigmarket/contracts';

/** Cents are not enough for per-second GPU billing: amounts are dollars rounded to 1e-6. */
export const roundMoney = (amount: number): number => Math.round(amount * 1e6) / 1e6;

export interface LedgerState {
  balance: number;
  /** A CreditExhausted was emitted and no grant has lifted the balance above zero since. */
  exhausted: boolean;
  /** Per instance, the end of its last charged period (ISO): a period is never charged twice. */
  billedUntil: Record<number, string>;
  /** A host's ledger: the charges (AccountCharged event ids) already earned, so a redelivered charge earns once. */
  earnedCharges: Record<string, true>;
}

export type LedgerCommand = { at: string; userId: number } & (
  | { type: 'GrantCredit'; amount: number; grantedBy: number; note: string | null }
  | {
      type: 'Charge';
      instanceId: number;
      machineId: number;
      hostId: number;
      kind: 'gpu' | 'storage';
      amount: number;
      periodStart: string;
      periodEnd: string;
    }
  | { type: 'RecordEarning'; chargeId: string; instanceId: number; machineId: number; amount: number }
);

export const LedgerErrors = { invalidAmount: 'invalid_amount', alreadyBilled: 'already_billed' } as const;

export const initialState = (): LedgerState => ({
  balance: 0,
  exhausted: false,
  billedUntil: {},
  earnedCharges: {},
});

export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  switch (event.type) {
    case 'CreditGranted': {
      const balance = roundMoney(state.balance + event.data.amount);
      return { ...state, balance, exhausted: state.exhausted && balance <= 0 };
    }
    case 'AccountCharged': {
      const previous = state.billedUntil[event.data.instanceId];
      const until =
        previous !== undefined && previous > event.data.periodEnd ? previous : event.data.periodEnd;
      return {
        ...state,
        balance: roundMoney(state.balance - event.data.amount),
        billedUntil: { ...state.billedUntil, [event.data.instanceId]: until },
      };
    }
    case 'HostEarned': {
      const balance = roundMoney(state.balance + event.data.amount);
      const chargeId = event.data.chargeId;
      return chargeId === undefined
        ? { ...state, balance }
        : { ...state, balance, earnedCharges: { ...state.earnedCharges, [chargeId]: true } };
    }
    case 'CreditExhausted':
      return { ...state, exhausted: true };
  }
}

function positive(amount: number, allowZero = false): void {
  if (!Number.isFinite(amount) || amount < 0 || (!allowZero && amount === 0)) {
    throw new ApiError(400, LedgerErrors.invalidAmount, 'amount must be a positive number of dollars');
  }
}

export function decide(command: LedgerCommand, state: LedgerState): LedgerEvent[] {
  switch (command.type) {
    case 'GrantCredit':
      positive(command.amount);
      return [
        {
          type: 'CreditGranted',
          data: {
            userId: command.userId,
            amount: roundMoney(command.amount),
            grantedBy: command.grantedBy,
            note: command.note,
            at: command.at,
          },
        },
      ];
    case 'Charge': {
      positive(command.amount, true);
      const billedUntil = state.billedUntil[command.instanceId];
      if (billedUntil !== undefined && new Date(command.periodStart) < new Date(billedUntil)) {
        throw ApiError.conflict(
          `instance ${command.instanceId} is already billed until ${billedUntil}`,
          LedgerErrors.alreadyBilled,
        );
      }
      const amount = roundMoney(command.amount);
      if (amount === 0) return [];
      const events: LedgerEvent[] = [
        {
          type: 'AccountCharged',
          data: {
            userId: command.userId,
            instanceId: command.instanceId,
            machineId: command.machineId,
            kind: command.kind,
            amount,
            periodStart: command.periodStart,
            periodEnd: command.periodEnd,
            at: command.at,
            hostId: command.hostId,
          },
        },
      ];
      const balance = roundMoney(state.balance - amount);
      if (balance <= 0 && !state.exhausted)
        events.push({ type: 'CreditExhausted', data: { userId: command.userId, balance, at: command.at } });
      return events;
    }
    case 'RecordEarning': {
      positive(command.amount, true);
      const amount = roundMoney(command.amount);
      // Idempotent per charge: the reactor runs at least once.
      if (amount === 0 || state.earnedCharges[command.chargeId]) return [];
      return [
        {
          type: 'HostEarned',
          data: {
            userId: command.userId,
            machineId: command.machineId,
            instanceId: command.instanceId,
            amount,
            at: command.at,
            chargeId: command.chargeId,
          },
        },
      ];
    }
  }
}

export const ledgerDecider = { initialState, evolve, decide };
export const ledgerStreamId = (userId: number): string => `ledger-${userId}`;

/** What a period at a rate costs: the rate ($/hour) prorated by the second. */
export function chargeFor(ratePerHour: number, from: Date, to: Date): number {
  const seconds = Math.max(0, (to.getTime() - from.getTime()) / 1000);
  return roundMoney((ratePerHour * seconds) / 3600);
}
