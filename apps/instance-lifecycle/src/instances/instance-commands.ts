/**
 * What the instance use cases (create-instance/, change-instance/, change-bid/, ...) and the reactors share:
 * running commands on the instance and allocation streams.
 */
import {
  ApiError,
  type DomainEvent,
  type EventEnvelope,
  type EventMetadata,
  type InstanceEvent,
  MONEY_LIMITS,
} from '@rigmarket/contracts';
import {
  type ContextRuntime,
  type CommandBody,
  type Folded,
  type HandleOptions,
  type Sql,
  type StreamAppend,
  type TimedDecider,
  appendAndProject,
} from '@rigmarket/event-sourcing';
import {
  type AllocationEvent,
  allocationDecider,
  allocationStreamId,
} from '../allocation/allocation.decider';
import { type HostCommandOptions, kickAfterCommit, writeHostCommands } from '../host/host-commands';
import {
  type InstanceCommand,
  type InstanceState,
  instanceDecider,
  instanceStreamId,
} from './instance.decider';

type InstanceCommandBody = CommandBody<InstanceCommand>;

/**
 * Runs one command on an instance's stream; the host commands its events call for are written in the
 * same transaction (host_commands) and delivered after the commit by HostCommandDispatcher.
 */
export async function runInstanceCommand(
  runtime: ContextRuntime,
  instanceId: number,
  command: InstanceCommandBody,
  metadata: EventMetadata,
  options: HandleOptions<InstanceState, InstanceEvent> & HostCommandOptions = {},
) {
  let written = 0;
  const result = await runtime.runner.run(instanceStreamId(instanceId), instanceDecider, command, metadata, {
    ...options,
    alsoInTransaction: async (sql, envelopes, before, decided) => {
      await options.alsoInTransaction?.(sql, envelopes, before, decided);
      written = await writeHostCommands(sql, before, envelopes, decided, options);
    },
  });
  if (written > 0) kickAfterCommit(runtime);
  return result;
}

/**
 * The same, inside a transaction the caller holds (an outbid is decided on the allocation stream and
 * marked on the instance's in one transaction). A concurrent append to the instance's stream makes the
 * whole transaction retry (WrongExpectedVersion).
 */
export async function runInstanceCommandIn(
  runtime: ContextRuntime,
  sql: Sql,
  instanceId: number,
  command: InstanceCommandBody,
  metadata: EventMetadata,
  now: Date,
): Promise<EventEnvelope[]> {
  const { before, envelopes, decided } = await decideIn(
    runtime,
    sql,
    instanceStreamId(instanceId),
    instanceDecider,
    command,
    metadata,
    now,
  );
  if (envelopes.length > 0) await writeHostCommands(sql, before, envelopes, decided);
  return envelopes;
}

/**
 * One command (or several in turn, each decided on the state the previous one's events left) on a stream
 * inside a transaction the caller holds: read once, fold, decide, one append with the expected version (a
 * concurrent append makes the whole transaction retry) and apply the inline projections. `known`: the
 * stream's state and version as the caller already has them (a new stream's initial state, or what an
 * earlier committed transaction left): the stream is not read. It may be behind, never ahead: an append
 * since then makes this one fail on the stream's positions, and the retry must read.
 */
export async function decideIn<State, Command extends { at: string }, Event extends DomainEvent>(
  runtime: ContextRuntime,
  sql: Sql,
  streamId: string,
  decider: TimedDecider<State, Command, Event>,
  command: CommandBody<Command> | readonly CommandBody<Command>[],
  metadata: EventMetadata,
  now: Date,
  known?: StreamState<State>,
): Promise<{ before: State; after: State; envelopes: EventEnvelope[]; decided: Event[]; version: number }> {
  const decision = await decideOn(runtime, sql, streamId, decider, command, now, known);
  const { decided, expectedVersion } = decision;
  if (decided.length === 0) return { ...decision, envelopes: [], version: expectedVersion };
  const envelopes = await appendAndProject(sql, runtime.store, runtime.definition.inlineProjections, {
    ...decision.append,
    metadata,
    occurredAt: now,
  });
  return { ...decision, envelopes, version: expectedVersion + decided.length };
}

/**
 * decideIn without the append: the stream folded (from its snapshot, unless `known`) and decided; the caller
 * appends `decided` at `expectedVersion` in the same transaction (e.g. alongside another command's events:
 * HandleOptions.alongside). A stream with a snapshot policy gets its snapshot written here when one is due:
 * it rolls back with the transaction should the append fail.
 */
export async function decideOn<State, Command extends { at: string }, Event extends DomainEvent>(
  runtime: ContextRuntime,
  sql: Sql,
  streamId: string,
  decider: TimedDecider<State, Command, Event>,
  command: CommandBody<Command> | readonly CommandBody<Command>[],
  now: Date,
  known?: StreamState<State>,
): Promise<{
  before: State;
  after: State;
  decided: Event[];
  expectedVersion: number;
  /** `decided` at `expectedVersion`, for the caller's append. */
  append: StreamAppend;
}> {
  // A known state is never snapshotted (where its fold started is not known): as if just snapshotted.
  const folded: Folded<State> = known
    ? { ...known, eventsRead: 0, snapshotVersion: known.version }
    : await runtime.runner.foldIn(sql, streamId, decider);
  const { state: before, version } = folded;
  const at = now.toISOString();
  const decided: Event[] = [];
  let state = before;
  for (const body of Array.isArray(command) ? command : [command]) {
    const events = decider.decide({ ...body, at } as unknown as Command, state);
    decided.push(...events);
    // evolve may update in place: fold a copy of the state before, which the caller gets back.
    if (events.length > 0) state = events.reduce((s, e) => decider.evolve(s, e), structuredClone(state));
  }
  if (decided.length > 0)
    await runtime.runner.snapshotIfDue(sql, streamId, decider, folded, state, version + decided.length);
  return {
    before,
    after: state,
    decided,
    expectedVersion: version,
    append: { streamId, expectedVersion: version, events: decided },
  };
}

/** A stream's folded state and its version (the number of its events). */
export interface StreamState<State> {
  state: State;
  version: number;
}

export interface GpuRequest {
  machineId: number;
  instanceId: number;
  numGpus: number;
  machineGpus: number;
  bid: number | null;
}

/** How often a command on a machine's allocation stream decides again after a concurrent one took its version. */
export const ALLOCATION_ATTEMPTS = 100;

/**
 * Allocates on the machine's stream; instances outbid by it are marked outbid on their own streams in the
 * same transaction (their stop goes to host_commands with it): a crash never leaves an outbid instance
 * shown as running while another holds its GPUs. `alongside` adds the caller's events on other streams to
 * the allocation's append (HandleOptions.alongside); `awaitPublication: false` answers before the allocation
 * reaches the other contexts (a rent).
 */
export async function allocateGpus(
  runtime: ContextRuntime,
  a: GpuRequest,
  metadata: EventMetadata,
  { awaitPublication, alongside }: Pick<HandleOptions, 'awaitPublication' | 'alongside'> = {},
): Promise<void> {
  let marked = 0;
  await runtime.runner.run(
    allocationStreamId(a.machineId),
    allocationDecider,
    { type: 'AllocateGpus', ...a },
    metadata,
    {
      maxAttempts: ALLOCATION_ATTEMPTS,
      awaitPublication,
      alongside,
      alsoInTransaction: async (sql, _events, _before, decided) => {
        marked = await markOutbidIn(runtime, sql, decided, metadata);
      },
    },
  );
  if (marked > 0) kickAfterCommit(runtime);
}

/**
 * Marks outbid, each on its own stream and in the allocation's transaction, the instances whose GPUs an
 * allocation's events took (their stops go to host_commands with it). Returns how many events that wrote:
 * the caller kicks the host commands' delivery after the commit when any.
 */
export async function markOutbidIn(
  runtime: ContextRuntime,
  sql: Sql,
  allocation: readonly AllocationEvent[],
  metadata: EventMetadata,
): Promise<number> {
  let marked = 0;
  for (const event of allocation) {
    if (event.type !== 'GpusReleased' || !event.data.outbid) continue;
    const at = new Date(event.data.at);
    const { instanceId } = event.data;
    marked += (await runInstanceCommandIn(runtime, sql, instanceId, { type: 'MarkOutbid' }, metadata, at))
      .length;
  }
  return marked;
}

/** Gives an instance's GPUs back (nothing when it holds none). */
export async function releaseGpus(
  runtime: ContextRuntime,
  machineId: number,
  instanceId: number,
  metadata: EventMetadata,
): Promise<void> {
  await runtime.runner.run(
    allocationStreamId(machineId),
    allocationDecider,
    { type: 'ReleaseGpus', machineId, instanceId },
    metadata,
    { maxAttempts: ALLOCATION_ATTEMPTS },
  );
}

/**
 * HandleOptions.alongside of an instance command that may destroy the instance: when it does, the GPUs the
 * machine's allocation stream holds for it are released in the same append (nothing when it holds none), so
 * no crash leaves GPUs held by a destroyed instance. A concurrent allocation of the machine makes the append
 * fail on that stream's version and the command run again: give it ALLOCATION_ATTEMPTS.
 */
export function releaseOnDestroy(
  runtime: ContextRuntime,
): (sql: Sql, decided: readonly InstanceEvent[], now: Date) => Promise<StreamAppend[]> {
  return async (sql, decided, now) => {
    const destroyed = decided.find((e) => e.type === 'InstanceDestroyed');
    if (destroyed?.type !== 'InstanceDestroyed') return [];
    const { machineId, instanceId } = destroyed.data;
    const release = await decideOn(
      runtime,
      sql,
      allocationStreamId(machineId),
      allocationDecider,
      { type: 'ReleaseGpus', machineId, instanceId },
      now,
    );
    return release.decided.length === 0 ? [] : [release.append];
  };
}

/** A bid is at most MONEY_LIMITS.gpuPricePerHour per GPU of the offer (docs/api.md "Limits"). */
export function checkBidBound(price: number, numGpus: number): void {
  const max = MONEY_LIMITS.gpuPricePerHour * numGpus;
  if (price > max)
    throw new ApiError(
      400,
      'invalid_amount',
      `price must be at most ${MONEY_LIMITS.gpuPricePerHour.toLocaleString('en-US')} $/hour per GPU (${max.toLocaleString('en-US')} $/hour for ${numGpus} GPU${numGpus === 1 ? '' : 's'}; got ${price})`,
      { field: 'price', max },
    );
}
