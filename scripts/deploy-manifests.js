// Checks the manifests `helm template` rendered from deploy/helm/rigmarket (scripts/deploy-check.sh):
//   node scripts/deploy-manifests.js <rendered.yaml> [--existing-secrets]
// Each app is a Deployment with its Service, readiness on /readyz and liveness on /healthz, the shared
// ConfigMap and Secret, and DATABASE_URL from a Secret; instance-lifecycle is one replica (Recreate, no HPA);
// the others and the edge have a HorizontalPodAutoscaler; every component has a PodDisruptionBudget; the edge
// points at the apps' Services. Prints one line per failed check and exits 1 on any.
'use strict';
const { readFileSync } = require('node:fs');
const { parseAllDocuments } = require('yaml');

const [file, ...flags] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/deploy-manifests.js <rendered.yaml> [--existing-secrets]');
  process.exit(2);
}
const existingSecrets = flags.includes('--existing-secrets');
const docs = parseAllDocuments(readFileSync(file, 'utf8'))
  .map((d) => d.toJS())
  .filter(Boolean);
const APPS = ['identity-2fa', 'marketplace-api', 'instance-lifecycle', 'sync-maintenance'];
const SCALABLE = ['identity-2fa', 'marketplace-api', 'sync-maintenance', 'edge'];
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};
const named = (kind, component) =>
  docs.find((d) => d.kind === kind && d.metadata?.labels?.['app.kubernetes.io/name'] === component);
const byKind = (kind) => docs.filter((d) => d.kind === kind);

const config = byKind('ConfigMap')[0];
check(config?.data?.KAFKA_BROKERS, 'a ConfigMap with KAFKA_BROKERS');
const secret = byKind('Secret')[0];
if (existingSecrets) {
  check(!secret, 'no Secret of the chart when both existing Secrets are named');
} else {
  for (const key of [
    'DATABASE_URL',
    'RIGMARKET_TFA_KEY',
    'RIGMARKET_INSTANCE_SEAL_KEY',
    'RIGMARKET_REGISTRY_KEY',
  ]) {
    check(secret?.stringData?.[key], `the Secret holds ${key}`);
  }
}
// secrets never in the ConfigMap
for (const key of Object.keys(config?.data ?? {})) {
  check(
    !/(_KEY|DATABASE_URL|PASSWORD|TOKEN|SMTP_URL)$/.test(key),
    `ConfigMap key ${key} looks like a secret`,
  );
}

for (const app of APPS) {
  const dep = named('Deployment', app);
  check(dep, `Deployment ${app}`);
  if (!dep) continue;
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  check(c.readinessProbe?.httpGet?.path === '/readyz', `${app}: readinessProbe on /readyz`);
  check(c.livenessProbe?.httpGet?.path === '/healthz', `${app}: livenessProbe on /healthz`);
  check(c.resources?.requests?.cpu, `${app}: CPU request (the HPA measures against it)`);
  check(pod.securityContext?.runAsNonRoot === true, `${app}: runs as non-root`);
  check(new RegExp(`(^|/)rigmarket/${app}:[\\w.-]+$`).test(c.image), `${app}: image ${c.image}`);
  const envFrom = c.envFrom ?? [];
  check(
    envFrom.some((e) => e.configMapRef?.name === config?.metadata?.name),
    `${app}: environment from the ConfigMap`,
  );
  check(
    envFrom.some((e) => e.secretRef?.name === (existingSecrets ? 'my-keys' : secret?.metadata?.name)),
    `${app}: keys from the Secret`,
  );
  const db = (c.env ?? []).find((e) => e.name === 'DATABASE_URL');
  const ref = db?.valueFrom?.secretKeyRef;
  check(
    existingSecrets
      ? ref?.name === 'my-db' && ref?.key === 'url'
      : ref?.name === secret?.metadata?.name && ref?.key === 'DATABASE_URL',
    `${app}: DATABASE_URL from a Secret (${JSON.stringify(ref)})`,
  );
  check(
    !(c.env ?? []).some((e) => typeof e.value === 'string' && e.value.startsWith('postgres')),
    `${app}: no URL in plain env`,
  );
  const svc = named('Service', app);
  const port = c.ports?.[0]?.containerPort;
  check(svc?.spec?.ports?.[0]?.port === port, `Service ${app} on the app's port ${port}`);
  check(named('PodDisruptionBudget', app), `PodDisruptionBudget ${app}`);
}

const il = named('Deployment', 'instance-lifecycle');
check(il?.spec?.replicas === 1, 'instance-lifecycle: exactly one replica');
check(il?.spec?.strategy?.type === 'Recreate', 'instance-lifecycle: Recreate strategy (never two at once)');
check(
  !named('HorizontalPodAutoscaler', 'instance-lifecycle'),
  'instance-lifecycle: no HorizontalPodAutoscaler',
);
const ilPdb = named('PodDisruptionBudget', 'instance-lifecycle');
check(ilPdb?.spec?.maxUnavailable === 1, 'instance-lifecycle: its PDB lets a drain evict the single pod');

for (const name of SCALABLE) {
  const hpa = named('HorizontalPodAutoscaler', name);
  check(
    hpa?.spec?.scaleTargetRef?.name === named('Deployment', name)?.metadata?.name,
    `HorizontalPodAutoscaler for ${name}`,
  );
  check(hpa?.spec?.minReplicas >= 2, `${name}: HPA keeps at least 2 replicas`);
  const pdb = named('PodDisruptionBudget', name);
  check(pdb?.spec?.minAvailable >= 1, `${name}: PodDisruptionBudget keeps one available`);
}

const edge = named('Deployment', 'edge');
check(edge, 'Deployment edge');
if (edge) {
  const c = edge.spec.template.spec.containers[0];
  check(c.readinessProbe?.httpGet?.path === '/healthz', 'edge: readinessProbe on its /healthz');
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
  const upstreams = {
    IDENTITY_UPSTREAM: 'identity-2fa',
    MARKETPLACE_UPSTREAM: 'marketplace-api',
    INSTANCE_UPSTREAM: 'instance-lifecycle',
    SYNC_UPSTREAM: 'sync-maintenance',
  };
  for (const [key, app] of Object.entries(upstreams)) {
    const svc = named('Service', app);
    check(
      env[key] === `${svc?.metadata?.name}:${svc?.spec?.ports?.[0]?.port}`,
      `edge: ${key}=${env[key]} is Service ${app}`,
    );
  }
  check(named('Service', 'edge'), 'Service edge');
}

const counts = {};
for (const d of docs) counts[d.kind] = (counts[d.kind] ?? 0) + 1;
if (failures.length > 0) {
  for (const f of failures) console.error(`[deploy-manifests] FAILED: ${f}`);
  process.exit(1);
}
console.error(
  `[deploy-manifests] ${file}: ${Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ')}: all checks passed`,
);
