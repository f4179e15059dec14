import { createHash, hkdfSync } from 'node:crypto';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { openWith, sealWith } from '../sealing';

/**
 * Idempotency-Key on PUT /asks: a retried request gets the first answer (same new_contract and
 * instance_api_key) for 24 hours. The record holds neither the Idempotency-Key nor the instance key in
 * the clear: it is found by a hash of (renter, key), and the instance key is sealed (AES-256-GCM) under
 * a key derived from the Idempotency-Key, so only a caller who presents that key again can open it.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export interface IdempotentAnswer {
  instanceId: number;
  instanceApiKey: string;
}

const recordId = (renter: number, key: string): string =>
  createHash('sha256').update(`${renter}\0${key}`).digest('hex');

function sealingKey(renter: number, key: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, `rigmarket-idempotency:${renter}`, 'instance-api-key', 32));
}

export function seal(secret: string, renter: number, key: string): string {
  return sealWith(sealingKey(renter, key), secret);
}

export function open(sealed: string, renter: number, key: string): string {
  return openWith(sealingKey(renter, key), sealed);
}

export const requestHash = (offerId: number, request: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify([offerId, request]))
    .digest('hex');

export class IdempotencyRecords {
  constructor(private readonly runtime: ContextRuntime) {}

  private get table(): string {
    return `${this.runtime.schema}.create_idempotency`;
  }

  /** The first answer for (renter, key) within 24 hours; 422 when the key came with another body. */
  async prior(renter: number, key: string, hash: string): Promise<IdempotentAnswer | null> {
    const since = new Date(this.runtime.runner.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const rows = await this.runtime.db.query<{
      request_hash: string;
      instance_id: number;
      instance_api_key_sealed: string;
    }>(
      `SELECT request_hash, instance_id, instance_api_key_sealed FROM ${this.table} WHERE owner_id = $1 AND idem_key_hash = $2 AND created_at > $3`,
      [renter, recordId(renter, key), since],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.request_hash !== hash) {
      throw new ApiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request; use a new key for a new instance',
      );
    }
    return {
      instanceId: Number(row.instance_id),
      instanceApiKey: open(row.instance_api_key_sealed, renter, key),
    };
  }

  /** An expired record gives way to a new request with the same key. */
  async forget(renter: number, key: string): Promise<void> {
    await this.runtime.db.execute(`DELETE FROM ${this.table} WHERE owner_id = $1 AND idem_key_hash = $2`, [
      renter,
      recordId(renter, key),
    ]);
  }

  /** In the creating transaction: a concurrent twin fails here on the primary key and reads the first answer. */
  async record(
    sql: Sql,
    renter: number,
    key: string,
    hash: string,
    answer: IdempotentAnswer,
    at: string,
  ): Promise<void> {
    await sql.execute(
      `INSERT INTO ${this.table} (owner_id, idem_key_hash, request_hash, instance_id, instance_api_key_sealed, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [renter, recordId(renter, key), hash, answer.instanceId, seal(answer.instanceApiKey, renter, key), at],
    );
  }
}
