import { type Sql, defineProjection } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { SCHEMA } from '../../schema';
import type { TfaEvent } from '../../tfa/tfa.events';

async function upsert(sql: Sql, userId: number): Promise<void> {
  await sql.execute(
    `INSERT INTO ${SCHEMA}.tfa_accounts (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING`,
    [userId],
  );
}

export const tfaProjection = defineProjection<TfaEvent>({
  name: 'tfa',
  version: 1,
  sources: [{ context: 'identity', streamType: 'tfa' }],
  tables: [`${SCHEMA}.tfa_accounts`, `${SCHEMA}.tfa_secrets`, `${SCHEMA}.tfa_phone_setups`],
  eventTypes: [
    'TfaChallengeIssued',
    'TfaChallengeCodeReplaced',
    'TfaMethodAdded',
    'TfaMethodRemoved',
    'TfaDisabled',
    'TfaLegacyMarked',
  ],
  async apply(sql, event) {
    const userId = event.data.userId;
    switch (event.type) {
      case 'TfaChallengeIssued':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.tfa_secrets (secret_hash, user_id, issued_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [event.data.secretHash, userId, event.data.issuedAt],
        );
        if (event.data.channel === 'sms' && event.data.phone && event.data.purpose === 'setup') {
          await sql.execute(
            `INSERT INTO ${SCHEMA}.tfa_phone_setups (phone_hash, user_id, issued_at) VALUES ($1, $2, $3)`,
            [hashKey(event.data.phone), userId, event.data.issuedAt],
          );
        }
        return;
      case 'TfaChallengeCodeReplaced':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.tfa_secrets (secret_hash, user_id, issued_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [event.data.secretHash, userId, event.data.issuedAt],
        );
        return;
      case 'TfaMethodAdded':
        await upsert(sql, userId);
        await sql.execute(
          `UPDATE ${SCHEMA}.tfa_accounts SET enabled = TRUE, legacy = FALSE, method_count = method_count + 1 WHERE user_id = $1`,
          [userId],
        );
        return;
      case 'TfaMethodRemoved':
        await sql.execute(
          `UPDATE ${SCHEMA}.tfa_accounts SET method_count = GREATEST(method_count - 1, 0) WHERE user_id = $1`,
          [userId],
        );
        return;
      case 'TfaDisabled':
        await upsert(sql, userId);
        await sql.execute(
          `UPDATE ${SCHEMA}.tfa_accounts SET enabled = FALSE, legacy = FALSE, method_count = 0 WHERE user_id = $1`,
          [userId],
        );
        return;
      case 'TfaLegacyMarked':
        await upsert(sql, userId);
        await sql.execute(
          `UPDATE ${SCHEMA}.tfa_accounts SET enabled = TRUE, legacy = TRUE WHERE user_id = $1`,
          [userId],
        );
        return;
    }
  },
});
