import { CloudConnectionPublicEvents } from './cloud-connections';
import { ScheduledCallPublicEvents } from './cloud-copy-call';
import type { ContextName, EventEnvelope } from './envelope';
import { HostAgentPublicEvents } from './host-agent-events';
import { IdentityPublicEvents } from './identity';
import { InstancePublicEvents } from './instance';
import { MarketplacePublicEvents } from './marketplace';
import { SyncPublicEvents } from './sync';

export interface PublicEventSpec {
  schemaVersion: number;
  streamType: string;
}

/** Every public event type per context, with its current payload version. */
export const PUBLIC_EVENTS: Record<ContextName, Record<string, PublicEventSpec>> = {
  identity: IdentityPublicEvents,
  marketplace: MarketplacePublicEvents,
  instance: {
    ...InstancePublicEvents,
    ...HostAgentPublicEvents,
    ...CloudConnectionPublicEvents,
    ...ScheduledCallPublicEvents,
  },
  sync: SyncPublicEvents,
};

export function isPublicEvent(context: ContextName, type: string): boolean {
  return Object.prototype.hasOwnProperty.call(PUBLIC_EVENTS[context], type);
}

export function currentSchemaVersion(context: ContextName, type: string): number {
  return PUBLIC_EVENTS[context][type]?.schemaVersion ?? 1;
}

/** Turns a payload of version `from` into version `from + 1`. */
export type Upcaster = (data: unknown) => unknown;

/** Upcasters keyed by `<type>@<fromVersion>`. Consumers apply them on read. */
const UPCASTERS = new Map<string, Upcaster>();

export function registerUpcaster(type: string, fromVersion: number, upcaster: Upcaster): void {
  UPCASTERS.set(`${type}@${fromVersion}`, upcaster);
}

/**
 * Brings an envelope's payload up to `targetVersion` (default: the registry's current one).
 * Throws when a step is missing: silently mis-reading old data would be worse.
 */
export function upcast(envelope: EventEnvelope, targetVersion?: number): EventEnvelope {
  const target = targetVersion ?? currentSchemaVersion(envelope.context, envelope.type);
  let data = envelope.data;
  let version = envelope.schemaVersion;
  while (version < target) {
    const step = UPCASTERS.get(`${envelope.type}@${version}`);
    if (!step) throw new Error(`No upcaster for ${envelope.type} from schema version ${version}`);
    data = step(data);
    version += 1;
  }
  return version === envelope.schemaVersion ? envelope : { ...envelope, data, schemaVersion: version };
}
