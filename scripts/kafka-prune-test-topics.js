#!/usr/bin/env node
/*
 * Deletes the Kafka topics that earlier test runs left on the local broker (scripts/infra.sh's Kafka).
 *
 * Every test that uses Kafka works in a namespace of its own, `<prefix>_<time in base 36>_<6 hex>.` (testing's
 * uniqueName; benchmarks: `<prefix>-<time in ms>.`), so runs never meet. The topics stay after the run, and a developer's broker gathers thousands of
 * them: with ~15,000 partitions Kafka took over two minutes to start. scripts/test.sh runs this before the tests.
 * Only topics of a test namespace older than the age limit are deleted (a run going on meanwhile keeps its
 * own); platform topics (`rigmarket.…`) never match.
 *
 *   node scripts/kafka-prune-test-topics.js [--older-than-minutes N]   (KAFKA_BROKERS; default 120 minutes)
 */
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const TEST_NAMESPACE = /^[a-z][a-z0-9-]*_([0-9a-z]{7,10})_[0-9a-f]{6}\./;
const BENCH_NAMESPACE = /^[a-z][a-z0-9-]*?[-.](\d{13})\./;
const BATCH = 500;

/** The time a test namespace was made (ms), or null for a topic that is not a test's. */
function namespaceTime(topic) {
  const test = TEST_NAMESPACE.exec(topic);
  if (test) return parseInt(test[1], 36);
  const bench = BENCH_NAMESPACE.exec(topic);
  return bench ? Number(bench[1]) : null;
}

async function main() {
  const brokers = (process.env.KAFKA_BROKERS || '').split(',').filter(Boolean);
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set (. .infra/env)');
  const flag = process.argv.indexOf('--older-than-minutes');
  const minutes = flag > 0 ? Number(process.argv[flag + 1]) : 120;
  if (!Number.isFinite(minutes) || minutes < 0) throw new Error('--older-than-minutes takes a number');
  const cutoff = Date.now() - minutes * 60_000;

  const admin = new Kafka({
    clientId: 'rigmarket-prune-test-topics',
    brokers,
    logLevel: logLevel.ERROR,
  }).admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    const stale = topics.filter((topic) => {
      const made = namespaceTime(topic);
      return made !== null && made < cutoff;
    });
    for (let i = 0; i < stale.length; i += BATCH) {
      await admin.deleteTopics({ topics: stale.slice(i, i + BATCH), timeout: 60_000 });
      process.stdout.write(
        `\r[kafka] deleted ${Math.min(i + BATCH, stale.length)} of ${stale.length} old test topics`,
      );
    }
    if (stale.length > 0) process.stdout.write('\n');
    console.log(
      `[kafka] ${topics.length - stale.length} topics kept (${stale.length} old test topics deleted)`,
    );
  } finally {
    await admin.disconnect();
  }
}

if (require.main === module) {
  main().catch((error) => {
    // Pruning is housekeeping: a failure is reported, never fatal to the test run.
    console.error(`[kafka] old test topics not pruned: ${error.message}`);
  });
}

module.exports = { namespaceTime };
