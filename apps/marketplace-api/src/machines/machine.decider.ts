import {
  DomainError,
  MONEY_LIMITS,
  type MachineAsk,
  type MachineEvent,
  type MachineHardware,
  type MachineVerification,
} from '@rigmarket/contracts';

/** Reliability is up time over this rolling window, sampled per heartbeat interval. */
export const RELIABILITY_WINDOW_S = 24 * 3600;
export const HEARTBEAT_INTERVAL_S = 60;

export type MachineState =
  | { status: 'none' }
  | {
      status: 'registered';
      machineId: number;
      ownerId: number;
      registeredAt: number;
      listed: boolean;
      ask: MachineAsk | null;
      verification: MachineVerification;
      /** The last recorded reliability; the heartbeats it comes from are in `machine_liveness`, not events. */
      reliability: number;
      volumeSpaceListed: boolean;
    };

/** Every command carries its time (ISO-8601, from the injected clock): deciders read no clock. */
export type MachineCommand = { at: string } & (
  | {
      type: 'RegisterMachine';
      machineId: number;
      ownerId: number;
      hardware: MachineHardware;
      dlperf: number;
      tflops: number;
    }
  /**
   * `vastai list machine` (also "set price"): the fields given; the CLI sends the ones its user left unset as
   * null, which the controller drops, so a re-listing keeps the machine's current values for them.
   */
  | { type: 'ListMachine'; requesterId: number; ask: Partial<MachineAsk> }
  | { type: 'UnlistMachine'; requesterId: number }
  | { type: 'SetMinBid'; requesterId: number; minBid: number }
  | { type: 'SetVerification'; verification: MachineVerification }
  /**
   * A heartbeat of the owner's host, with the reliability its liveness slots now yield (reliabilityOf,
   * computed by the handler from `machine_liveness`): an event only when the reliability changes.
   */
  | { type: 'RecordHeartbeat'; requesterId: number; reliability: number }
  /** The reliability sweep, for a machine that sent no heartbeat lately: the window moved on without it. */
  | { type: 'RecomputeReliability'; reliability: number }
  | {
      type: 'ListVolumeSpace';
      requesterId: number;
      sizeGb: number;
      priceDisk: number;
      endDate: number | null;
    }
  | { type: 'UnlistVolumeSpace'; requesterId: number }
  /**
   * `vastai delete machine`: refused while other users have instances on it (renterInstances, counted by the
   * handler from the allocations read model); the host's own instances there are disregarded.
   */
  | { type: 'DeleteMachine'; requesterId: number; renterInstances: number }
);

export const MachineErrors = {
  notFound: 'no_such_machine',
  exists: 'machine_exists',
  invalidAsk: 'invalid_ask',
  inUse: 'machine_in_use',
} as const;

export const initialState = (): MachineState => ({ status: 'none' });

export const slotOf = (epochSeconds: number): number => Math.floor(epochSeconds / HEARTBEAT_INTERVAL_S);

/** Share of heartbeat slots seen in the window (or since registration, when younger than the window). */
export function reliabilityOf(slots: readonly number[], registeredAt: number, now: number): number {
  const from = Math.max(slotOf(registeredAt), slotOf(now - RELIABILITY_WINDOW_S));
  const expected = slotOf(now) - from + 1;
  const seen = new Set(slots.filter((s) => s >= from && s <= slotOf(now))).size;
  return Math.min(1, Math.round((seen / Math.max(1, expected)) * 10_000) / 10_000);
}

export function evolve(state: MachineState, event: MachineEvent): MachineState {
  switch (event.type) {
    case 'MachineRegistered':
      return {
        status: 'registered',
        machineId: event.data.machineId,
        ownerId: event.data.ownerId,
        registeredAt: Date.parse(event.data.registeredAt) / 1000,
        listed: false,
        ask: null,
        verification: 'unverified',
        reliability: 0,
        volumeSpaceListed: false,
      };
  }
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'MachineListed':
      return { ...state, listed: true, ask: event.data.ask };
    case 'MachineUnlisted':
      return { ...state, listed: false };
    case 'MinBidChanged':
      return { ...state, ask: state.ask ? { ...state.ask, minBid: event.data.minBid } : state.ask };
    case 'MachineVerificationChanged':
      return { ...state, verification: event.data.verification };
    case 'VolumeSpaceListed':
      return { ...state, volumeSpaceListed: true };
    case 'VolumeSpaceUnlisted':
      return { ...state, volumeSpaceListed: false };
    case 'MachineDeleted':
      return { status: 'none' };
    // Heartbeats recorded as events before liveness moved to machine_liveness.
    case 'MachineHeartbeat':
    case 'MachineReliabilityChanged':
      return { ...state, reliability: event.data.reliability };
  }
}

function ownedMachine(state: MachineState, requesterId: number) {
  // Another host's machine is reported as missing.
  if (state.status !== 'registered' || state.ownerId !== requesterId) {
    throw new DomainError(MachineErrors.notFound, 'no such machine id');
  }
  return state;
}

const DURATION_UNITS: Record<string, number> = {
  hour: 3600,
  day: 86400,
  week: 7 * 86400,
  month: 30 * 86400,
  year: 365 * 86400,
};

/** `list machine -l '3 months'` sends duration as text: "3 months", "2 weeks", "10 days", "1 year". */
export function durationSeconds(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(hour|day|week|month|year)s?\s*$/i.exec(text);
  return match ? Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase()]! : null;
}

/** A price of an ask: a number >= 0 and at most its documented bound (docs/api.md "Limits"), else 400 naming both. */
function checkPrice(name: string, value: number | null, max: number, unit: string): void {
  if (value === null || !Number.isFinite(value) || value < 0) {
    throw new DomainError(MachineErrors.invalidAsk, `${name} must be a number >= 0`);
  }
  if (value > max) {
    throw new DomainError(
      MachineErrors.invalidAsk,
      `${name} must be at most ${max.toLocaleString('en-US')} ${unit} (got ${value})`,
      { field: name, max },
    );
  }
}

/** The ask after a listing: the given fields over the current ask (or the defaults, for a first listing). */
function askAfter(current: MachineAsk | null, given: Partial<MachineAsk>): MachineAsk {
  const priceGpu = given.priceGpu ?? current?.priceGpu;
  if (priceGpu === undefined) {
    throw new DomainError(MachineErrors.invalidAsk, 'price_gpu is required to list a machine (-g PRICE_GPU)');
  }
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return {
    priceDisk: 0,
    priceInetUp: 0,
    priceInetDown: 0,
    minChunk: 1,
    endDate: null,
    creditDiscountMax: 0,
    duration: null,
    volSize: null,
    volPrice: null,
    ...current,
    minBid: current?.minBid ?? priceGpu,
    ...defined,
    priceGpu,
  };
}

function validateAsk(ask: MachineAsk): void {
  const prices: Array<[string, number | null, number, string]> = [
    ['price_gpu', ask.priceGpu, MONEY_LIMITS.gpuPricePerHour, '$/hour per GPU'],
    ['price_disk', ask.priceDisk, MONEY_LIMITS.diskPricePerGbMonth, '$/GB/month'],
    ['price_inetu', ask.priceInetUp, MONEY_LIMITS.inetPricePerGb, '$/GB'],
    ['price_inetd', ask.priceInetDown, MONEY_LIMITS.inetPricePerGb, '$/GB'],
    ['price_min_bid', ask.minBid, MONEY_LIMITS.gpuPricePerHour, '$/hour per GPU'],
    ['credit_discount_max', ask.creditDiscountMax, Infinity, ''],
  ];
  for (const [name, value, max, unit] of prices) checkPrice(name, value, max, unit);
  if (ask.volPrice !== null)
    checkPrice('vol_price', ask.volPrice, MONEY_LIMITS.diskPricePerGbMonth, '$/GB/month');
  if (ask.creditDiscountMax > 1)
    throw new DomainError(MachineErrors.invalidAsk, 'credit_discount_max must be between 0 and 1');
  if (!Number.isInteger(ask.minChunk) || ask.minChunk < 1)
    throw new DomainError(MachineErrors.invalidAsk, 'min_chunk must be an integer >= 1');
}

export function decide(command: MachineCommand, state: MachineState): MachineEvent[] {
  const nowIso = command.at;
  switch (command.type) {
    case 'RegisterMachine': {
      if (state.status !== 'none') throw new DomainError(MachineErrors.exists, 'This machine id is taken');
      return [
        {
          type: 'MachineRegistered',
          data: {
            machineId: command.machineId,
            ownerId: command.ownerId,
            hardware: command.hardware,
            dlperf: command.dlperf,
            tflops: command.tflops,
            registeredAt: nowIso,
          },
        },
      ];
    }
    case 'ListMachine': {
      const machine = ownedMachine(state, command.requesterId);
      let ask = askAfter(machine.ask, command.ask);
      validateAsk(ask);
      if (command.ask.endDate == null && command.ask.duration != null && ask.duration !== null) {
        const seconds = durationSeconds(ask.duration);
        if (seconds === null)
          throw new DomainError(
            MachineErrors.invalidAsk,
            `Invalid duration ${JSON.stringify(ask.duration)}: use e.g. "3 months", "2 weeks", "10 days"`,
          );
        ask = { ...ask, endDate: Date.parse(command.at) / 1000 + seconds };
      }
      return [
        {
          type: 'MachineListed',
          data: { machineId: machine.machineId, ownerId: machine.ownerId, ask, listedAt: nowIso },
        },
      ];
    }
    case 'UnlistMachine': {
      const machine = ownedMachine(state, command.requesterId);
      if (!machine.listed) return [];
      return [{ type: 'MachineUnlisted', data: { machineId: machine.machineId, unlistedAt: nowIso } }];
    }
    case 'SetMinBid': {
      const machine = ownedMachine(state, command.requesterId);
      checkPrice('price', command.minBid, MONEY_LIMITS.gpuPricePerHour, '$/hour per GPU');
      if (!machine.ask)
        throw new DomainError(
          MachineErrors.invalidAsk,
          'The machine has no ask yet: list it first (create_asks)',
        );
      if (machine.ask.minBid === command.minBid) return [];
      return [{ type: 'MinBidChanged', data: { machineId: machine.machineId, minBid: command.minBid } }];
    }
    case 'SetVerification': {
      if (state.status !== 'registered') throw new DomainError(MachineErrors.notFound, 'no such machine id');
      if (state.verification === command.verification) return [];
      return [
        {
          type: 'MachineVerificationChanged',
          data: { machineId: state.machineId, verification: command.verification },
        },
      ];
    }
    case 'ListVolumeSpace': {
      const machine = ownedMachine(state, command.requesterId);
      if (!Number.isFinite(command.sizeGb) || command.sizeGb <= 0)
        throw new DomainError(MachineErrors.invalidAsk, 'size must be a number of GB > 0');
      checkPrice('size', command.sizeGb, MONEY_LIMITS.diskGb, 'GB');
      checkPrice('price_disk', command.priceDisk, MONEY_LIMITS.diskPricePerGbMonth, '$/GB/month');
      return [
        {
          type: 'VolumeSpaceListed',
          data: {
            machineId: machine.machineId,
            ownerId: machine.ownerId,
            sizeGb: command.sizeGb,
            priceDisk: command.priceDisk,
            endDate: command.endDate,
            listedAt: nowIso,
          },
        },
      ];
    }
    case 'UnlistVolumeSpace': {
      const machine = ownedMachine(state, command.requesterId);
      if (!machine.volumeSpaceListed) return [];
      return [{ type: 'VolumeSpaceUnlisted', data: { machineId: machine.machineId, unlistedAt: nowIso } }];
    }
    case 'DeleteMachine': {
      const machine = ownedMachine(state, command.requesterId);
      if (command.renterInstances > 0)
        throw new DomainError(
          MachineErrors.inUse,
          `machine ${machine.machineId} is in use: ${command.renterInstances} instance(s) of other users are on it; they must end first`,
        );
      // Unlisted first, so every read model that follows listings drops the machine's offers as it would on an unlist.
      const events: MachineEvent[] = [];
      if (machine.listed)
        events.push({ type: 'MachineUnlisted', data: { machineId: machine.machineId, unlistedAt: nowIso } });
      if (machine.volumeSpaceListed)
        events.push({
          type: 'VolumeSpaceUnlisted',
          data: { machineId: machine.machineId, unlistedAt: nowIso },
        });
      events.push({
        type: 'MachineDeleted',
        data: { machineId: machine.machineId, ownerId: machine.ownerId, deletedAt: nowIso },
      });
      return events;
    }
    case 'RecordHeartbeat':
    case 'RecomputeReliability': {
      const machine = command.type === 'RecordHeartbeat' ? ownedMachine(state, command.requesterId) : state;
      if (machine.status !== 'registered' || command.reliability === machine.reliability) return [];
      return [
        {
          type: 'MachineReliabilityChanged',
          data: { machineId: machine.machineId, at: nowIso, reliability: command.reliability },
        },
      ];
    }
  }
}

/**
 * Streams from before machine_liveness grew by a heartbeat a minute: a snapshot every 100 events bounds
 * every command's fold. Bump `version` whenever MachineState or evolve changes (older snapshots are then
 * ignored and replaced).
 */
export const machineSnapshot = { version: 2, every: 100 };

export const machineDecider = { initialState, evolve, decide, snapshot: machineSnapshot };
export const machineStreamId = (machineId: number): string => `machine-${machineId}`;
