import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * Tests run against the real services `npm test` starts (scripts/test.sh): PostgreSQL and Kafka.
 * A missing service is a failure, never a skip.
 */
export function requiredEnv(name: 'DATABASE_URL' | 'KAFKA_BROKERS'): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run the suite with \`npm test\`, which starts PostgreSQL and Kafka (scripts/infra.sh).`,
    );
  }
  return value;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A fresh database on the test server, dropped by `drop()`. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = requiredEnv('DATABASE_URL');
  const name = uniqueName('rmtest');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(`Timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
