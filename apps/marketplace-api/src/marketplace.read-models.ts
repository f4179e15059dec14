import type {
  EventEnvelope,
  MachineAsk,
  MachineEvent,
  MachineHardware,
  MachineVerification,
  TemplateContent,
  TemplateEvent,
  UserRegistered,
} from '@rigmarket/contracts';
import type { Projection, Sql } from '@rigmarket/event-sourcing';
import { type MachineForOffers, OFFER_COLUMNS, type OfferRow, offerRowsFor } from './offers/offer-rows';

export const SCHEMA = 'marketplace';

interface MachineRow {
  machine_id: number;
  owner_id: number;
  hardware: MachineHardware | string | null;
  ask: MachineAsk | string | null;
  listed: boolean;
  listed_at: Date | string | null;
  verification: MachineVerification;
  reliability: number;
  dlperf: number;
  tflops: number;
  gpus_allocated: number;
}

const json = <T>(value: T | string | null): T | null =>
  typeof value === 'string' ? (JSON.parse(value) as T) : value;

export function machineForOffers(row: MachineRow): MachineForOffers | null {
  const hardware = json(row.hardware);
  if (!hardware) return null;
  return {
    machineId: Number(row.machine_id),
    ownerId: Number(row.owner_id),
    hardware,
    ask: json(row.ask),
    listed: row.listed,
    listedAt: row.listed_at ? new Date(row.listed_at).getTime() / 1000 : null,
    verification: row.verification,
    reliability: Number(row.reliability),
    dlperf: Number(row.dlperf),
    tflops: Number(row.tflops),
    gpusAllocated: Number(row.gpus_allocated),
  };
}

/** Multi-row INSERT with parameters only (500 rows a statement keeps under the 65535-parameter cap). */
export async function insertOfferRows(sql: Sql, rows: readonly OfferRow[], schema = SCHEMA): Promise<void> {
  const width = OFFER_COLUMNS.length;
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    const params: unknown[] = [];
    const tuples = batch.map((row, i) => {
      for (const column of OFFER_COLUMNS) params.push(row[column]);
      return `(${OFFER_COLUMNS.map((_, j) => `$${i * width + j + 1}`).join(', ')})`;
    });
    await sql.execute(
      `INSERT INTO ${schema}.offers (${OFFER_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
}

/** The machines read model (GET /machines) and, from it, the machine's offer rows. */
export const machinesProjection: Projection = {
  name: 'machines',
  version: 2,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.machines`, `${SCHEMA}.offers`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MachineEvent;
    const t = `${SCHEMA}.machines`;
    switch (event.type) {
      case 'MachineRegistered': {
        const hw = event.data.hardware;
        await sql.execute(
          `INSERT INTO ${t} (machine_id, owner_id, gpu_name, num_gpus, listed, details, hardware, dlperf, tflops, registered_at)
           VALUES ($1, $2, $3, $4, FALSE, '{}', $5, $6, $7, $8)`,
          [
            event.data.machineId,
            event.data.ownerId,
            hw.gpuName,
            hw.numGpus,
            JSON.stringify(hw),
            event.data.dlperf,
            event.data.tflops,
            event.data.registeredAt,
          ],
        );
        break;
      }
      case 'MachineListed':
        await sql.execute(`UPDATE ${t} SET listed = TRUE, ask = $2, listed_at = $3 WHERE machine_id = $1`, [
          event.data.machineId,
          JSON.stringify(event.data.ask),
          event.data.listedAt,
        ]);
        break;
      case 'MachineUnlisted':
        await sql.execute(`UPDATE ${t} SET listed = FALSE WHERE machine_id = $1`, [event.data.machineId]);
        break;
      case 'MinBidChanged':
        await sql.execute(
          `UPDATE ${t} SET ask = jsonb_set(ask, '{minBid}', to_jsonb($2::float8)) WHERE machine_id = $1 AND ask IS NOT NULL`,
          [event.data.machineId, event.data.minBid],
        );
        break;
      case 'MachineVerificationChanged':
        await sql.execute(`UPDATE ${t} SET verification = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.verification,
        ]);
        break;
      case 'MachineHeartbeat': {
        // A heartbeat changes the offers only when it moves the reliability (offers show it and their score
        // uses it): a steady machine's heartbeats no longer rewrite its offer rows every minute.
        const [before] = await sql.query<{ reliability: number }>(
          `SELECT reliability FROM ${t} WHERE machine_id = $1 FOR UPDATE`,
          [event.data.machineId],
        );
        await sql.execute(`UPDATE ${t} SET reliability = $2, last_heartbeat_at = $3 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.reliability,
          event.data.at,
        ]);
        if (before && Number(before.reliability) === event.data.reliability) return;
        break;
      }
      case 'MachineReliabilityChanged':
        await sql.execute(`UPDATE ${t} SET reliability = $2 WHERE machine_id = $1`, [
          event.data.machineId,
          event.data.reliability,
        ]);
        break;
      default:
        return;
    }
    await refreshOffers(sql, event.data.machineId);
  },
};

/**
 * GPUs held by live instances, from the instance_allocations read model. Computed when read (the stored
 * machines.gpus_allocated column of 0003 is no longer used), so rebuilding the machines projection alone
 * keeps the allocations: each read model is fed by its own events only.
 */
export const GPUS_ALLOCATED = `(SELECT COALESCE(SUM(ia.num_gpus), 0) FROM ${SCHEMA}.instance_allocations ia WHERE ia.machine_id = m.machine_id AND ia.held) AS gpus_allocated`;

/** Replaces one machine's offer rows; free GPUs = num_gpus - GPUS_ALLOCATED. */
export async function refreshOffers(sql: Sql, machineId: number): Promise<void> {
  await sql.execute(`DELETE FROM ${SCHEMA}.offers WHERE machine_id = $1`, [machineId]);
  const rows = await sql.query<MachineRow>(
    `SELECT machine_id, owner_id, hardware, ask, listed, listed_at, verification, reliability, dlperf, tflops, ${GPUS_ALLOCATED}
       FROM ${SCHEMA}.machines m WHERE machine_id = $1`,
    [machineId],
  );
  const machine = rows[0] ? machineForOffers(rows[0]) : null;
  if (machine) await insertOfferRows(sql, offerRowsFor(machine));
}

const epoch = (iso: string) => Date.parse(iso) / 1000;

function templateColumns(content: TemplateContent): unknown[] {
  return [
    content.name,
    content.image,
    content.tag,
    content.docker_login_repo,
    content.jup_direct,
    content.ssh_direct,
    content.use_ssh,
    content.recommended_disk_space,
    content.private,
    JSON.stringify(content),
  ];
}

export const templatesProjection: Projection = {
  name: 'templates',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'template' }],
  tables: [`${SCHEMA}.templates`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as TemplateEvent;
    const t = `${SCHEMA}.templates`;
    switch (event.type) {
      case 'TemplateCreated':
        await sql.execute(
          `INSERT INTO ${t} (name, image, tag, docker_login_repo, jup_direct, ssh_direct, use_ssh, recommended_disk_space, private, content,
                             template_id, hash_id, creator_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
          [
            ...templateColumns(event.data.content),
            event.data.templateId,
            event.data.hashId,
            event.data.creatorId,
            epoch(event.data.createdAt),
          ],
        );
        return;
      case 'TemplateEdited':
        await sql.execute(
          `UPDATE ${t} SET name = $1, image = $2, tag = $3, docker_login_repo = $4, jup_direct = $5, ssh_direct = $6, use_ssh = $7,
                  recommended_disk_space = $8, private = $9, content = $10, hash_id = $12
            WHERE template_id = $11`,
          [...templateColumns(event.data.content), event.data.templateId, event.data.hashId],
        );
        return;
      case 'TemplateDeleted':
        await sql.execute(`DELETE FROM ${t} WHERE template_id = $1`, [event.data.templateId]);
        return;
      default:
        return;
    }
  },
};

/** Admins, from identity's users: they may set a machine's verification. */
export const adminUsersProjection: Projection = {
  name: 'admin_users',
  version: 1,
  sources: [{ context: 'identity', streamType: 'user' }],
  tables: [`${SCHEMA}.admin_users`],
  async apply(sql: Sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as UserRegistered;
    if (event.type === 'UserRegistered' && event.data.isAdmin) {
      await sql.execute(`INSERT INTO ${SCHEMA}.admin_users (user_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
        event.data.userId,
      ]);
    }
  },
};
