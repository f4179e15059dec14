'use strict';
// Smoke test of the broker started by infra/kafka/start.sh with kafkajs 2.2.4 (docs/kafka.md §6, steps 4-8).
// Step 8 (--crash) asserts 0 lost and 0 duplicates in the log; the consumer itself may see a few
// redeliveries across a broker crash (its last offset commit can fail while the group re-forms): that is
// Kafka's at-least-once delivery, which the projections must absorb by handling events idempotently.
// Run it through infra/kafka/smoke.sh, which installs kafkajs outside the repo and sets NODE_PATH.
//   KAFKA_BROKERS=127.0.0.1:19092   broker to test
//   SMOKE_CRASH=1                   also kill -9 the broker mid-test and restart it (step 8);
//                                   needs SMOKE_RESTART_CMD (a shell command that starts it again)
//                                   and SMOKE_PIDFILE (the broker pid file)
const { Kafka, logLevel, Partitioners } = require('kafkajs');
const { randomUUID } = require('crypto');
const { execSync } = require('child_process');
const fs = require('fs');

const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:19092').split(',');
const run = randomUUID().slice(0, 8);
const kafka = new Kafka({
  clientId: 'rigmarket-smoke',
  brokers,
  connectionTimeout: 3000,
  requestTimeout: 30000,
  retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 2000 },
  logLevel: logLevel.ERROR,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const log = (...a) => console.log(`[smoke +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
function assert(cond, msg) {
  if (!cond) throw new Error(`ASSERTION FAILED: ${msg}`);
}
async function until(cond, ms, what) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timeout after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

const consumerOpts = {
  sessionTimeout: 6000,
  rebalanceTimeout: 10000,
  heartbeatInterval: 500,
  maxWaitTimeInMs: 250,
  retry: { retries: 8 },
};

// Start a consumer; resolves after it joined the group. seen: array of received values.
async function startConsumer(groupId, topic, seen, extra = {}) {
  const consumer = kafka.consumer({ groupId, ...consumerOpts, ...extra });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let assignment = null;
  const joined = new Promise((r) =>
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      assignment = e.payload.memberAssignment;
      r();
    }),
  );
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value.toString()) });
  await joined;
  return { consumer, assignment: () => assignment };
}

async function main() {
  // 4. admin: createTopics (3 partitions), describeCluster, fetchTopicMetadata
  const admin = kafka.admin();
  await admin.connect();
  const cluster = await admin.describeCluster();
  log(
    `describeCluster: ${cluster.brokers.length} broker(s), controller ${cluster.controller}, cluster ${cluster.clusterId}`,
  );
  const topic = `smoke-${run}`;
  const txTopic = `smoke-tx-${run}`;
  const cleanup = [topic, txTopic];
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic, numPartitions: 3, replicationFactor: 1 },
      { topic: txTopic, numPartitions: 1, replicationFactor: 1 },
    ],
  });
  assert(created === true, 'createTopics returned true');
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  assert(md.topics[0].partitions.length === 3, 'topic has 3 partitions');
  log(`createTopics + fetchTopicMetadata ok: ${topic} has ${md.topics[0].partitions.length} partitions`);

  // 5. idempotent producer: 1,000 messages; a fresh group reads exactly 1,000; restart: no redelivery
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  const N = 1000;
  for (let b = 0; b < N; b += 100) {
    const messages = [];
    for (let i = b; i < b + 100; i++) messages.push({ key: `k${i % 17}`, value: `m${i}` });
    await producer.send({ topic, acks: -1, messages });
  }
  log(`idempotent producer sent ${N} messages`);

  const group = `smoke-g-${run}`;
  const seen1 = [];
  let tj = Date.now();
  const c1 = await startConsumer(group, topic, seen1);
  log(`consumer joined fresh group in ${Date.now() - tj} ms`);
  await until(() => seen1.length >= N, 30000, `${N} messages`);
  await sleep(1500); // anything extra would be a duplicate
  assert(seen1.length === N && new Set(seen1).size === N, `read exactly ${N} distinct (got ${seen1.length})`);
  await c1.consumer.disconnect(); // commits
  log(`consumer read exactly ${N}, committed, disconnected`);

  const seen2 = [];
  const c2 = await startConsumer(group, topic, seen2);
  await sleep(1500);
  assert(seen2.length === 0, `no redelivery after restart (got ${seen2.length})`);
  await producer.send({ topic, acks: -1, messages: [{ value: 'after-restart' }] });
  await until(() => seen2.length >= 1, 15000, 'the new message');
  await sleep(500);
  assert(seen2.length === 1 && seen2[0] === 'after-restart', 'restarted consumer sees only the new message');
  await c2.consumer.disconnect();
  log('restarted consumer: 0 redelivered, new message received');

  // 6. two consumers in one group split 3 partitions
  const g2 = `smoke-split-${run}`;
  const sa = [];
  const sb = [];
  tj = Date.now();
  const ca = await startConsumer(g2, topic, sa);
  const cb = await startConsumer(g2, topic, sb);
  // after the second join, the first member rebalances; wait until assignments are disjoint and complete
  const parts = (c) => ((c.assignment() || {})[topic] || []).slice().sort();
  await until(
    () => {
      const pa = parts(ca);
      const pb = parts(cb);
      return (
        pa.length > 0 && pb.length > 0 && pa.length + pb.length === 3 && new Set([...pa, ...pb]).size === 3
      );
    },
    30000,
    'a 3-partition split between two members',
  );
  log(`two members split partitions: [${parts(ca)}] + [${parts(cb)}] (both joined in ${Date.now() - tj} ms)`);
  await until(() => sa.length + sb.length >= N + 1, 30000, 'group to read everything');
  await sleep(1000);
  assert(new Set([...sa, ...sb]).size === N + 1, 'group of two read every message');
  await Promise.all([ca.consumer.disconnect(), cb.consumer.disconnect()]);

  // 7. transactions: commit one batch, abort another; read_committed sees only the committed one
  const txp = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    transactionalId: `smoke-tx-${run}`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await txp.connect();
  let tx = await txp.transaction();
  await tx.send({ topic: txTopic, messages: [1, 2, 3, 4, 5].map((i) => ({ value: `committed-${i}` })) });
  await tx.commit();
  tx = await txp.transaction();
  await tx.send({ topic: txTopic, messages: [1, 2, 3, 4, 5].map((i) => ({ value: `aborted-${i}` })) });
  await tx.abort();
  await txp.disconnect();
  const st = [];
  const ct = await startConsumer(`smoke-txg-${run}`, txTopic, st, { readUncommitted: false });
  await until(() => st.length >= 5, 15000, 'committed transactional messages');
  await sleep(1500);
  assert(
    st.length === 5 && st.every((v) => v.startsWith('committed-')),
    `read_committed sees only 5 committed (got ${st})`,
  );
  await ct.consumer.disconnect();
  log('transactions: committed batch visible, aborted batch hidden (read_committed)');

  // 8. optional: kill -9 the broker, restart without formatting; 0 lost, 0 duplicated
  if (process.env.SMOKE_CRASH === '1') {
    const pidfile = process.env.SMOKE_PIDFILE;
    const restart = process.env.SMOKE_RESTART_CMD;
    assert(pidfile && restart, 'SMOKE_PIDFILE and SMOKE_RESTART_CMD are set');
    const ctopic = `smoke-crash-${run}`;
    cleanup.push(ctopic);
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: ctopic, numPartitions: 3 }] });
    const sc = [];
    const cc = await startConsumer(`smoke-crash-g-${run}`, ctopic, sc);
    for (let i = 0; i < 500; i += 50) {
      await producer.send({
        topic: ctopic,
        acks: -1,
        messages: Array.from({ length: 50 }, (_, j) => ({ key: `k${j}`, value: `c${i + j}` })),
      });
    }
    await until(() => sc.length >= 500, 30000, '500 messages before the crash');
    await sleep(1000); // let the consumer commit
    const pid = fs.readFileSync(pidfile, 'utf8').trim();
    log(`kill -9 broker pid ${pid}`);
    process.kill(Number(pid), 'SIGKILL');
    await sleep(500);
    const tr = Date.now();
    execSync(restart, { stdio: 'inherit' });
    log(`broker restarted in ${Date.now() - tr} ms`);
    for (let i = 500; i < 1000; i += 50) {
      await producer.send({
        topic: ctopic,
        acks: -1,
        messages: Array.from({ length: 50 }, (_, j) => ({ key: `k${j}`, value: `c${i + j}` })),
      });
    }
    await until(() => new Set(sc).size >= 1000, 60000, '1000 messages after the restart');
    await sleep(1500);
    const counts = new Map();
    for (const v of sc) counts.set(v, (counts.get(v) || 0) + 1);
    const redelivered = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
    log(
      `after kill -9 + restart: consumer received ${counts.size}/1000 distinct, ` +
        `${sc.length - counts.size} redelivered (at-least-once; allowed)${redelivered.length ? `: ${redelivered.slice(0, 10)}` : ''}`,
    );
    assert(counts.size === 1000, '0 lost');
    await cc.consumer.disconnect();
    // the log itself must hold each message exactly once (idempotent producer across the crash)
    const sl = [];
    const cl = await startConsumer(`smoke-crash-verify-${run}`, ctopic, sl);
    await until(() => sl.length >= 1000, 30000, 'the whole crash topic');
    await sleep(1500);
    log(`crash topic log holds ${sl.length} records, ${new Set(sl).size} distinct`);
    assert(sl.length === 1000 && new Set(sl).size === 1000, '0 lost, 0 duplicated in the log');
    await cl.consumer.disconnect();
  }

  await producer.disconnect();
  await admin.deleteTopics({ topics: cleanup }).catch(() => {});
  await admin.disconnect();
  log('SMOKE TEST PASSED');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('[smoke] FAILED:', e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
