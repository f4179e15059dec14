// How long after DELETE /auth/apikeys/{id} answers does another app process refuse the key?
// Distributed mode: identity-2fa in this process, marketplace-api as its own process, PostgreSQL + Kafka.
// Run: bash scripts/infra.sh up && . .infra/env && npm run build && node bench/key-revocation.js [rounds]
require('./no-rate-limits');
require('reflect-metadata');
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { Client } = require('pg');
const { Database } = require('@rigmarket/event-sourcing');
const { createPlatformApp } = require('@rigmarket/http-kit');
const { IdentityModule } = require('@rigmarket/identity-2fa');
const { KafkaTransport } = require('@rigmarket/messaging');

const ROUNDS = Number(process.argv[2] ?? 30);
const ADMIN = 'bench-admin-key';
const PORT = 18282;

async function main() {
  if (!process.env.DATABASE_URL || !process.env.KAFKA_BROKERS) throw new Error('source .infra/env first');
  const name = `rmbench_${Date.now()}`;
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const namespace = `${name}.`;
  const db = await Database.connect({ kind: 'postgres', url: url.toString() });
  const transport = new KafkaTransport({
    brokers: process.env.KAFKA_BROKERS.split(','),
    clientId: 'bench',
    namespace,
  });
  await transport.ensureTopics();
  process.env.LOG_LEVEL = 'silent';
  const app = await createPlatformApp({
    db,
    transport,
    modules: [IdentityModule.forRoot({ adminKey: ADMIN })],
  });
  await app.listen(0, '127.0.0.1');
  const identity = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const child = spawn(process.execPath, [join(__dirname, '../apps/marketplace-api/dist/main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      RIGMARKET_KAFKA_NAMESPACE: namespace,
      PORT: String(PORT),
      LOG_LEVEL: 'silent',
    },
    stdio: 'inherit',
  });
  const market = `http://127.0.0.1:${PORT}`;
  const until = async (check, what, limitMs = 30000) => {
    const start = Date.now();
    for (;;) {
      if (await check().catch(() => false)) return Date.now() - start;
      if (Date.now() - start > limitMs) throw new Error(`timeout: ${what}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const status = async (key) =>
    (await fetch(`${market}/api/v0/machines`, { headers: { Authorization: `Bearer ${key}` } })).status;
  await until(async () => (await fetch(`${market}/readyz`)).ok, 'marketplace start', 60000);
  const latencies = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const created = await (
      await fetch(`${identity}/api/v0/auth/apikeys/`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json();
    await until(async () => (await status(created.key)) === 200, 'key propagation');
    const res = await fetch(`${identity}/api/v0/auth/apikeys/${created.id}/`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    if (!res.ok) throw new Error(`delete failed ${res.status}`);
    latencies.push(await until(async () => (await status(created.key)) === 401, 'revocation'));
  }
  latencies.sort((a, b) => a - b);
  const pick = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(
    JSON.stringify({
      bench: 'key-revocation-distributed',
      rounds: ROUNDS,
      p50_ms: pick(0.5),
      p95_ms: pick(0.95),
      max_ms: latencies[latencies.length - 1],
    }),
  );
  child.kill('SIGTERM');
  await app.close();
  await transport.close();
  await db.close();
  await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
  await admin.end();
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
