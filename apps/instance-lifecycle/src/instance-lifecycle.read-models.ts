import type {
  EventEnvelope,
  InstanceConfig,
  InstanceEvent,
  MachineAsk,
  MachineEvent,
  TemplateContent,
  TemplateEvent,
} from '@rigmarket/contracts';
import type { Projection, Sql } from '@rigmarket/event-sourcing';

export const SCHEMA = 'instance_lifecycle';

/** An instance's machine verification, as a column expression over `instances` (no alias). */
export const INSTANCE_VERIFICATION = `COALESCE((SELECT mm.verification FROM ${SCHEMA}.market_machines mm WHERE mm.machine_id = ${SCHEMA}.instances.machine_id), 'unverified')`;

export interface MachineRecord {
  machineId: number;
  ownerId: number;
  gpuName: string;
  numGpus: number;
  gpuRam: number;
  publicIpaddr: string | null;
  listed: boolean;
  ask: MachineAsk | null;
  vmsEnabled: boolean;
}

export interface TemplateRecord {
  templateId: number;
  hashId: string;
  creatorId: number;
  content: TemplateContent;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

export async function findMachine(sql: Sql, machineId: number): Promise<MachineRecord | null> {
  const rows = await sql.query<{
    machine_id: number;
    owner_id: number;
    gpu_name: string;
    num_gpus: number;
    gpu_ram: number;
    public_ipaddr: string | null;
    listed: boolean;
    ask: unknown;
    vms_enabled: boolean;
  }>(`SELECT * FROM ${SCHEMA}.market_machines WHERE machine_id = $1`, [machineId]);
  const row = rows[0];
  if (!row) return null;
  return {
    machineId: Number(row.machine_id),
    ownerId: Number(row.owner_id),
    gpuName: row.gpu_name,
    numGpus: Number(row.num_gpus),
    gpuRam: Number(row.gpu_ram),
    publicIpaddr: row.public_ipaddr,
    listed: row.listed,
    ask: row.ask === null ? null : json<MachineAsk>(row.ask),
    vmsEnabled: row.vms_enabled === true,
  };
}

export async function findTemplate(sql: Sql, hashId: string): Promise<TemplateRecord | null> {
  const rows = await sql.query<{
    template_id: number;
    hash_id: string;
    creator_id: number;
    content: unknown;
  }>(
    `SELECT template_id, hash_id, creator_id, content FROM ${SCHEMA}.market_templates WHERE hash_id = $1 AND NOT deleted`,
    [hashId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    templateId: Number(row.template_id),
    hashId: row.hash_id,
    creatorId: Number(row.creator_id),
    content: json<TemplateContent>(row.content),
  };
}

export const marketMachinesProjection: Projection = {
  name: 'market_machines',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.market_machines`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MachineEvent;
    const table = `${SCHEMA}.market_machines`;
    switch (event.type) {
      case 'MachineRegistered': {
        const hw = event.data.hardware;
        await sql.execute(
          `INSERT INTO ${table} (machine_id, owner_id, gpu_name, num_gpus, gpu_ram, public_ipaddr, vms_enabled, geolocation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (machine_id) DO UPDATE SET gpu_name = EXCLUDED.gpu_name, num_gpus = EXCLUDED.num_gpus, gpu_ram = EXCLUDED.gpu_ram,
             public_ipaddr = EXCLUDED.public_ipaddr, vms_enabled = EXCLUDED.vms_enabled, geolocation = EXCLUDED.geolocation`,
          [
            event.data.machineId,
            event.data.ownerId,
            hw.gpuName,
            hw.numGpus,
            hw.gpuRamMb,
            hw.publicIpaddr,
            hw.vmsEnabled ?? false,
            hw.geolocation,
          ],
        );
        return;
      }
      case 'MachineListed':
        await sql.execute(`UPDATE ${table} SET listed = TRUE, ask = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          JSON.stringify(event.data.ask),
        ]);
        return;
      case 'MachineUnlisted':
        await sql.execute(`UPDATE ${table} SET listed = FALSE WHERE machine_id = $1`, [event.data.machineId]);
        return;
      case 'MinBidChanged':
        await sql.execute(
          `UPDATE ${table} SET ask = jsonb_set(ask, '{minBid}', to_jsonb($2::double precision)) WHERE machine_id = $1 AND ask IS NOT NULL`,
          [event.data.machineId, event.data.minBid],
        );
        return;
      case 'MachineVerificationChanged':
        await sql.execute(`UPDATE ${table} SET verification = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.verification,
        ]);
        return;
      default:
        return;
    }
  },
};

export const marketTemplatesProjection: Projection = {
  name: 'market_templates',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'template' }],
  tables: [`${SCHEMA}.market_templates`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as TemplateEvent;
    const table = `${SCHEMA}.market_templates`;
    switch (event.type) {
      case 'TemplateCreated':
        await sql.execute(
          `INSERT INTO ${table} (template_id, hash_id, creator_id, content) VALUES ($1, $2, $3, $4) ON CONFLICT (template_id) DO NOTHING`,
          [
            event.data.templateId,
            event.data.hashId,
            event.data.creatorId,
            JSON.stringify(event.data.content),
          ],
        );
        return;
      case 'TemplateEdited':
        await sql.execute(`UPDATE ${table} SET hash_id = $2, content = $3 WHERE template_id = $1`, [
          event.data.templateId,
          event.data.hashId,
          JSON.stringify(event.data.content),
        ]);
        return;
      case 'TemplateDeleted':
        await sql.execute(`UPDATE ${table} SET deleted = TRUE WHERE template_id = $1`, [
          event.data.templateId,
        ]);
        return;
      default:
        return;
    }
  },
};

/** status_msg while marketplace creates the instance's volume (volume_info create_new). */
export const waitingForVolumeMsg = (v: NonNullable<InstanceConfig['newVolume']>): string =>
  `Waiting for the volume: creating ${v.sizeGb} GB from volume offer ${v.volumeOfferId}; the container starts once it exists`;

export const CREDIT_RELEASED_MSG =
  'Stopped: the account ran out of credit and the GPUs were released. Add credit, then start the instance again (it takes GPUs again if they are free).';
export const OUTBID_MSG =
  'Outbid: a higher bid or an on-demand rental took the GPUs; raise the bid (bid_price) and start the instance again';

/** The mutable parts of a row kept as JSON (the rest are columns, for filters and ordering). */
export interface InstanceDetails {
  hostId: number;
  offerId: number;
  gpuRam: number;
  publicIpaddr: string | null;
  bidPrice: number | null;
  config: InstanceConfig;
  sshHost: string | null;
  sshPort: number | null;
  ports: Record<string, number>;
  statusMsg: string | null;
}

/** Inline: the row is current in the command's own transaction (read-your-writes). */
export const instancesProjection: Projection = {
  name: 'instances',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.instances`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as InstanceEvent;
    const table = `${SCHEMA}.instances`;
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data;
        const machine = await findMachine(sql, d.machineId);
        const details: InstanceDetails = {
          hostId: d.hostId,
          offerId: d.offerId,
          gpuRam: machine?.gpuRam ?? 0,
          publicIpaddr: machine?.publicIpaddr ?? null,
          bidPrice: d.bidPrice,
          config: d.config,
          sshHost: null,
          sshPort: null,
          ports: {},
          statusMsg: d.config.newVolume ? waitingForVolumeMsg(d.config.newVolume) : 'Provisioning',
        };
        await sql.execute(
          `INSERT INTO ${table} (instance_id, owner_id, machine_id, actual_status, intended_status, label, gpu_name, num_gpus, dph_total, start_date, details)
           VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (instance_id) DO NOTHING`,
          [
            d.instanceId,
            d.renter,
            d.machineId,
            d.targetState,
            d.label,
            d.gpuName,
            d.numGpus,
            d.dphTotal,
            new Date(d.createdAt).getTime() / 1000,
            JSON.stringify(details),
          ],
        );
        return;
      }
      case 'InstanceStateChanged': {
        const d = event.data;
        const patch = { sshHost: d.sshHost, sshPort: d.sshPort, ports: d.ports, statusMsg: d.statusMsg };
        await sql.execute(
          `UPDATE ${table} SET actual_status = $2, details = details || $3::jsonb WHERE instance_id = $1`,
          [d.instanceId, d.actualStatus, JSON.stringify(patch)],
        );
        return;
      }
      case 'InstanceIntentChanged':
        await sql.execute(`UPDATE ${table} SET intended_status = $2 WHERE instance_id = $1`, [
          event.data.instanceId,
          event.data.intendedStatus,
        ]);
        return;
      case 'InstanceLabelled':
        await sql.execute(`UPDATE ${table} SET label = $2 WHERE instance_id = $1`, [
          event.data.instanceId,
          event.data.label,
        ]);
        return;
      case 'InstanceOutbid':
        await sql.execute(
          `UPDATE ${table} SET intended_status = 'stopped', details = details || $2::jsonb WHERE instance_id = $1`,
          [
            event.data.instanceId,
            JSON.stringify({ statusMsg: event.data.reason === 'credit' ? CREDIT_RELEASED_MSG : OUTBID_MSG }),
          ],
        );
        return;
      case 'InstanceBidChanged':
        await sql.execute(
          `UPDATE ${table} SET dph_total = $2, details = details || $3::jsonb WHERE instance_id = $1`,
          [event.data.instanceId, event.data.price, JSON.stringify({ bidPrice: event.data.price })],
        );
        return;
      case 'InstanceVolumeAttached': {
        const volume = { volumeId: event.data.volumeId, mountPath: event.data.mountPath };
        await sql.execute(
          `UPDATE ${table} SET details = jsonb_set(details, '{config,volume}', $2::jsonb) || $3::jsonb WHERE instance_id = $1`,
          [event.data.instanceId, JSON.stringify(volume), JSON.stringify({ statusMsg: 'Provisioning' })],
        );
        return;
      }
      case 'InstanceDestroyed':
        await sql.execute(`UPDATE ${table} SET destroyed = TRUE WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        await sql.execute(`DELETE FROM ${SCHEMA}.instance_keys WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        await sql.execute(`DELETE FROM ${SCHEMA}.pending_provisions WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        return;
      default:
        return;
    }
  },
};
