'use strict';
// Routing check for the edge (run through infra/nginx/test-routing.sh, which starts nginx first).
// Starts four stand-in upstreams on the app ports; each answers with what it received (its port, method,
// url, headers, body). Then sends requests through the edge and checks which port each one reached.
// No dependencies beyond Node itself.
const http = require('http');
const fs = require('fs');

const env = process.env;
const EDGE = Number(env.EDGE_PORT || 8080);
const APPS = {
  identity: Number(env.IDENTITY_PORT || 8081),
  marketplace: Number(env.MARKETPLACE_PORT || 8082),
  instance: Number(env.INSTANCE_PORT || 8083),
  sync: Number(env.SYNC_PORT || 8084),
};
const ACCESS_LOG = env.EDGE_ACCESS_LOG;
const NOT_FOUND = '{"success":false,"error":"not_found","msg":"No route for this path"}';

// [method, path, expected app or 404, optional body]
const CASES = [
  // account routes the edge once missed (every OpenAPI path must reach its app: edge-routes.spec.ts)
  ['POST', '/api/v0/users/logout/', 'identity'],
  ['PUT', '/api/v0/users/password/', 'identity'],
  ['GET', '/api/v0/subaccounts?owner=me', 'identity'],
  ['GET', '/api/v0/secrets/', 'instance'],
  ['DELETE', '/api/v0/secrets/', 'instance'],
  ['GET', '/api/v0/instances/pending-price-increases/', 'instance'],
  // sync-maintenance (regex, under prefixes owned by others)
  ['POST', '/api/v0/commands/rclone', 'sync', '{"src":"a"}'],
  ['PUT', '/api/v0/commands/rclone/', 'sync'],
  ['PUT', '/api/v0/commands/rclone/cancel/', 'sync'],
  ['POST', '/api/v0/commands/copy_direct', 'sync'],
  ['POST', '/api/v0/commands/copy_direct/', 'sync'],
  ['GET', '/api/v0/machines/maintenances?api_key=SECRETKEY123', 'sync'],
  ['GET', '/api/v0/machines/maintenances/', 'sync'],
  ['PUT', '/api/v0/machines/123/cancel_maint', 'sync'],
  ['PUT', '/api/v0/machines/123/cancel_maint/', 'sync'],
  ['PUT', '/api/v0/machines/abc-9/dnotify', 'sync'],
  ['PUT', '/api/v0/machines/abc-9/dnotify/?x=1', 'sync'],
  // what the vastai CLI sends for syncs and maintenance (docs/client-compat.md 2.12, 2.13)
  [
    'PUT',
    '/api/v0/commands/copy_direct/',
    'sync',
    '{"client_id":"me","src_id":"1","dst_id":"2","src_path":"/a/","dst_path":"/b/"}',
  ],
  ['DELETE', '/api/v0/commands/copy_direct/', 'sync', '{"client_id":"me","dst_id":"2"}'],
  ['DELETE', '/api/v0/commands/rclone/', 'sync', '{"client_id":"me","dst_id":"2"}'],
  [
    'PUT',
    '/api/v0/machines/42/dnotify/',
    'sync',
    '{"client_id":"me","sdate":1900000000.0,"duration":2.0,"maintenance_category":"power"}',
  ],
  ['GET', '/api/v0/machines/maintenances?owner=me&machine_ids=%5B42%2C+43%5D', 'sync'],
  ['PUT', '/api/v0/machines/42/minbid/', 'marketplace', '{"price":0.2}'],
  ['PUT', '/api/v0/machines/create_bids/', 'instance', '{"machine":42,"image":"busybox","args":null}'],
  ['DELETE', '/api/v0/machines/42/defjob/', 'instance'],
  ['PUT', '/api/v0/machines/42/cleanup/', 'instance', '{}'],
  ['GET', '/api/v0/machines/42/reports/', 'instance', '{"machine_id":42}'],
  ['POST', '/api/v0/machines/42/force_delete/', 'marketplace'],
  ['PUT', '/api/v0/machines/defrag_offers/', 'marketplace', '{"machine_ids":[42,43]}'],
  // identity-2fa
  ['GET', '/api/v0/users/current', 'identity'],
  ['GET', '/api/v0/users/current/?api_key=SECRETKEY123&owner=me', 'identity'],
  ['POST', '/api/v0/users/login', 'identity', '{"username":"a","password":"b"}'],
  ['POST', '/api/v0/users/login/', 'identity'],
  ['GET', '/api/v0/users/verify_email?token=t', 'identity'],
  ['POST', '/api/v0/users', 'identity', '{"email":"x@y"}'],
  ['POST', '/api/v0/users/', 'identity', '{"email":"x@y"}'],
  ['GET', '/api/v0/auth/apikeys/', 'identity'],
  ['DELETE', '/api/v0/auth/apikeys/7', 'identity', '{"reason":"rotate"}'],
  ['GET', '/api/v0/tfa', 'identity'],
  ['POST', '/api/v0/tfa/totp/setup', 'identity'],
  ['GET', '/api/v0/team/roles/', 'identity'],
  ['GET', '/api/v0/team', 'identity'],
  ['PUT', '/api/v0/commands/reset_apikey/', 'identity'],
  ['GET', '/api/v0/ssh/', 'identity'],
  ['GET', '/api/v0/users/me/ipaddrs?owner=me', 'identity'],
  ['GET', '/api/v0/audit_logs/', 'identity'],
  ['GET', '/api/v0/audit_logs/?limit=5&before=abc', 'identity'],
  ['GET', '/api/v0/webhooks/', 'identity'],
  ['POST', '/api/v0/webhooks/3/deliveries/9/redeliver/', 'identity'],
  ['GET', '/api/v0/auth/apikeys/7/history/?as_of=1795600000', 'identity'],
  ['GET', '/api/v0/tfa/history/', 'identity'],
  ['GET', '/api/v0/instances/12/history/', 'instance'],
  ['GET', '/api/v0/instances/12/?as_of=1795600000', 'instance'],
  ['GET', '/api/v0/machines/5/history/', 'marketplace'],
  ['GET', '/api/v0/template/3/history/?as_of=1795600000', 'marketplace'],
  ['GET', '/api/v0/volumes/2/history/', 'marketplace'],
  ['DELETE', '/api/v0/ssh/12', 'identity', '{"id":12}'],
  ['PUT', '/api/v0/admin/users/7/legacy-2fa/', 'identity', '{"phone_number":"+14155550123"}'],
  // instance-lifecycle
  ['PUT', '/api/v0/asks/4242/', 'instance', '{"image":"x"}'],
  ['PUT', '/api/v0/launch_instance/', 'instance', '{"image":"x","q":{}}'],
  ['POST', '/api/v0/asks/bulk/', 'instance', '{"ids":[1]}'],
  ['GET', '/api/v0/instances?owner=me', 'instance'],
  ['GET', '/api/v0/instances/', 'instance'],
  ['DELETE', '/api/v0/instances/99/', 'instance', '{}'],
  ['PUT', '/api/v0/instances/request_logs/99/', 'instance'],
  ['PUT', '/api/v0/instances/command/99/', 'instance'],
  ['PUT', '/api/v0/instances/update_template/99/', 'instance'],
  ['POST', '/api/v0/instances/take_snapshot/99/', 'instance', '{}'],
  ['GET', '/api/v1/instances/', 'instance'],
  ['POST', '/api/v0/commands/schedule_job/', 'instance', '{"frequency":"HOURLY"}'],
  ['GET', '/api/v0/commands/schedule_job/', 'instance'],
  ['DELETE', '/api/v0/commands/schedule_job/7/', 'instance'],
  ['GET', '/api/v1/instances?select_filters=%7B%7D', 'instance'],
  ['GET', '/api/v0/instances/events/', 'instance'],
  ['GET', '/api/v0/instances/12/logs/stream/?tail=5', 'instance'],
  ['GET', '/api/v0/agent', 'instance'],
  ['GET', '/api/v0/users/cloud_integrations/', 'instance'],
  ['GET', '/api/v0/instance_backups/?contract_id=12', 'instance'],
  ['GET', '/api/v0/instance_backups/12/download/', 'instance'],
  ['GET', '/api/v0/instance_backups/files/3/upper.tar?Authorization=t', 'instance'],
  ['DELETE', '/api/v0/users/cloud_integrations/101/', 'instance'],
  ['GET', '/api/v0/metrics/gpu/current/?verified=all&hosting_type=all&num_gpus=all', 'instance'],
  ['GET', '/api/v0/metrics/gpu/history/?gpu_name=RTX+4090&start=1&end=2&step=60', 'instance'],
  ['GET', '/api/v0/metrics/gpu/locations/', 'instance'],
  ['GET', '/api/v0/metricsx', 404],
  ['GET', '/api/v0/benchmarks?select_cols=%5B%22%2A%22%5D&select_filters=%7B%7D', 'instance'],
  ['GET', '/api/v0/benchmarks/', 'instance'],
  ['POST', '/api/v0/agent/poll', 'instance', '{"machine_id":1}'],
  ['GET', '/logs/0123abcd.log', 'instance'],
  // marketplace-api
  ['GET', '/api/v0/users/me/invoices?start=1', 'marketplace'],
  ['GET', '/api/v0/users/me/machine-earnings/', 'marketplace'],
  ['GET', '/api/v0/bundles?q=%7B%22gpu_name%22%3A%22RTX%22%7D', 'marketplace'],
  ['POST', '/api/v0/bundles/', 'marketplace', '{"limit":3}'],
  ['GET', '/api/v0/bundles/', 'marketplace', '{"q":"body on GET"}'],
  ['PUT', '/api/v0/search/asks/', 'marketplace'],
  ['GET', '/api/v0/template/', 'marketplace'],
  ['GET', '/api/v0/template?hash=abc', 'marketplace'],
  ['PUT', '/api/v1/template/', 'marketplace', '{"hash_id":"abc"}'],
  ['GET', '/api/v0/machines', 'marketplace'],
  ['GET', '/api/v0/machines/', 'marketplace'],
  ['GET', '/api/v0/machines/123', 'marketplace'],
  ['PUT', '/api/v0/machines/create_asks/', 'marketplace', '{"machine":1}'],
  ['DELETE', '/api/v0/machines/123/asks/', 'marketplace', '{"why":"body on DELETE"}'],
  ['GET', '/api/v0/volumes/search/', 'marketplace'],
  ['POST', '/api/v0/volumes/copy/', 'marketplace', '{"src_id":3,"dst_id":222}'],
  ['GET', '/api/v0/gpu_names/unique/', 'marketplace'],
  ['GET', '/api/v0/charges', 'marketplace'],
  ['GET', '/api/v0/credit/', 'marketplace'],
  ['GET', '/api/v0/invoices?select_cols=%5B%22*%22%5D', 'marketplace'],
  ['GET', '/api/v1/invoices/?limit=20', 'marketplace'],
  ['PUT', '/api/v0/commands/transfer_credit/', 'marketplace', '{"recipient":"a@b.c","amount":1}'],
  ['PUT', '/api/v0/instances/prepay/555/', 'marketplace', '{"amount":10.0}'],
  ['GET', '/api/v0/instances/balance/555/?owner=me', 'marketplace'],
  // the interactive docs (any app serves the page and its assets)
  ['GET', '/docs', 'marketplace'],
  ['GET', '/docs/assets/swagger-ui.css', 'marketplace'],
  // no route: JSON 404 from the edge itself
  ['GET', '/api/v0/nope', 404],
  ['GET', '/api/v0/usersx', 404],
  ['GET', '/api/v0/asksx', 404],
  ['GET', '/api/v0/users/123/whatever', 404],
  ['POST', '/api/v2/instances', 404, '{}'],
  ['GET', '/api/', 404],
  ['POST', '/not-api', 404, '{}'],
  ['GET', '/logs/', 404],
];

function request(method, path, { body, headers = {}, port = EDGE } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined && !h['transfer-encoding']) h['content-length'] = Buffer.byteLength(body);
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: h, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error(`timeout ${method} ${path}`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function startStub(name, port) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      // A live stream (the live-streams check below): one event at once, the next a second later.
      if (req.headers['x-test-stream']) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: 1\ndata: first\n\n');
        setTimeout(() => res.end('id: 2\ndata: second\n\n'), 1500);
        return;
      }
      const out = JSON.stringify({
        app: name,
        port,
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) =>
      reject(new Error(`stand-in ${name} cannot listen on 127.0.0.1:${port}: ${e.message}`)),
    );
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

let failures = 0;
function check(cond, what) {
  if (!cond) {
    failures++;
    console.log(`  FAIL ${what}`);
  }
  return cond;
}

async function main() {
  const stubs = {};
  for (const [name, port] of Object.entries(APPS)) stubs[name] = await startStub(name, port);

  // 1. the routing table
  for (const [method, path, want, body] of CASES) {
    const r = await request(method, path, {
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
    });
    let ok;
    if (want === 404) {
      ok =
        check(r.status === 404, `${method} ${path}: status ${r.status}, want 404`) &&
        check(r.body === NOT_FOUND, `${method} ${path}: 404 body ${r.body}`) &&
        check(
          r.headers['content-type'] === 'application/json',
          `${method} ${path}: content-type "${r.headers['content-type']}"`,
        );
    } else {
      let got = {};
      try {
        got = JSON.parse(r.body);
      } catch {
        /* not from a stub */
      }
      ok =
        check(
          r.status === 200 && got.app === want && got.port === APPS[want],
          `${method} ${path}: reached ${got.app || r.status}, want ${want}`,
        ) &&
        check(got.method === method, `${method} ${path}: upstream saw method ${got.method}`) &&
        check(
          got.url === path,
          `${method} ${path}: upstream saw url ${got.url} (path/query must pass unchanged)`,
        ) &&
        check(got.body === (body || ''), `${method} ${path}: upstream saw body ${JSON.stringify(got.body)}`);
    }
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${method.padEnd(6)} ${path.padEnd(58)} -> ${want === 404 ? '404 JSON' : `${want} :${APPS[want]}`}`,
    );
  }

  // 2. headers: X-Request-Id kept or generated (and echoed), X-Forwarded-For
  let r = await request('GET', '/api/v0/users/current', {
    headers: { 'x-request-id': 'rid-abc-123', 'x-forwarded-for': '10.1.2.3' },
  });
  let got = JSON.parse(r.body);
  check(
    got.headers['x-request-id'] === 'rid-abc-123',
    `caller X-Request-Id passed upstream (got ${got.headers['x-request-id']})`,
  );
  check(r.headers['x-request-id'] === 'rid-abc-123', 'X-Request-Id echoed on the response');
  check(
    got.headers['x-forwarded-for'] === '10.1.2.3, 127.0.0.1',
    `X-Forwarded-For appended (got ${got.headers['x-forwarded-for']})`,
  );
  r = await request('GET', '/api/v0/bundles');
  got = JSON.parse(r.body);
  check(
    /^[0-9a-f]{32}$/.test(got.headers['x-request-id'] || ''),
    `X-Request-Id generated when absent (got ${got.headers['x-request-id']})`,
  );
  check(
    r.headers['x-request-id'] === got.headers['x-request-id'],
    'generated X-Request-Id echoed on the response',
  );
  check(
    got.headers['x-forwarded-for'] === '127.0.0.1',
    `X-Forwarded-For set (got ${got.headers['x-forwarded-for']})`,
  );
  check(got.headers.host === `127.0.0.1:${EDGE}`, `Host kept (got ${got.headers.host})`);
  r = await request('GET', '/api/v0/nope');
  check(/^[0-9a-f]{32}$/.test(r.headers['x-request-id'] || ''), 'X-Request-Id on the edge 404 too');
  console.log('ok   headers: X-Request-Id (kept / generated / echoed), X-Forwarded-For, Host');

  // the edge itself serves the whole platform's OpenAPI document (docs/openapi.json)
  const committed = fs.readFileSync(
    require('path').join(__dirname, '..', '..', 'docs', 'openapi.json'),
    'utf8',
  );
  for (const path of ['/api/v0/openapi.json', '/openapi.json']) {
    r = await request('GET', path);
    check(r.status === 200 && r.body === committed, `${path} is docs/openapi.json (got ${r.status})`);
    check(/application\/json/.test(r.headers['content-type'] || ''), `${path} is JSON`);
  }
  console.log('ok   OpenAPI document served by the edge');

  // live streams pass unbuffered: the first event arrives before the upstream ends the answer
  for (const path of ['/api/v0/instances/events/', '/api/v0/instances/12/logs/stream/']) {
    const first = await new Promise((resolve, reject) => {
      const started = Date.now();
      const req = http.get(
        { host: '127.0.0.1', port: EDGE, path, headers: { 'x-test-stream': '1' }, agent: false },
        (res) => {
          res.once('data', (chunk) => {
            resolve({ ms: Date.now() - started, text: chunk.toString() });
            res.destroy();
          });
        },
      );
      req.on('error', reject);
    });
    check(
      first.ms < 1000 && first.text.includes('data: first'),
      `${path}: first event passed at once, unbuffered (got ${JSON.stringify(first)})`,
    );
  }
  console.log('ok   live streams unbuffered');
  // the web console (apps/console/dist): index.html at / and for the client's routes, its bundles, its CSP
  const consoleIndex = fs.readFileSync(
    require('path').join(__dirname, '..', '..', 'apps', 'console', 'dist', 'index.html'),
    'utf8',
  );
  for (const path of ['/', '/instances', '/not-api']) {
    r = await request('GET', path);
    check(
      r.status === 200 && r.body === consoleIndex,
      `${path} is the console's index.html (got ${r.status})`,
    );
    check(/text\/html/.test(r.headers['content-type'] || ''), `${path} is HTML`);
    check(
      /script-src 'self'/.test(r.headers['content-security-policy'] || ''),
      `${path} has the console's CSP (got ${r.headers['content-security-policy']})`,
    );
  }
  const bundle = /src="(\/assets\/[^"]+\.js)"/.exec(consoleIndex);
  if (check(bundle, 'the console index names its script bundle')) {
    r = await request('GET', bundle[1]);
    check(r.status === 200 && /javascript/.test(r.headers['content-type'] || ''), `${bundle[1]} served`);
  }
  console.log('ok   web console served by the edge');

  // 3. bodies: chunked body on GET, 3 MB body on DELETE
  r = await request('GET', '/api/v0/instances/', {
    body: '{"chunked":true}',
    headers: { 'transfer-encoding': 'chunked' },
  });
  got = JSON.parse(r.body);
  check(got.body === '{"chunked":true}', `chunked GET body passed (got ${JSON.stringify(got.body)})`);
  const big = 'x'.repeat(3 * 1024 * 1024);
  r = await request('DELETE', '/api/v0/machines/5', { body: big });
  got = JSON.parse(r.body);
  check(got.body === big, `3 MB DELETE body passed (got ${got.body && got.body.length} bytes)`);
  console.log('ok   bodies: chunked GET body, 3 MB DELETE body');

  // 4. secrets never reach the access log
  await request('GET', '/api/v0/users/current?api_key=SECRETKEY123', {
    headers: { authorization: 'Bearer SECRETTOKEN456' },
  });
  if (ACCESS_LOG) {
    await new Promise((res) => setTimeout(res, 300));
    const logText = fs.readFileSync(ACCESS_LOG, 'utf8');
    check(
      !logText.includes('SECRETKEY123') && !logText.includes('api_key'),
      'api_key is not in the access log',
    );
    check(!logText.includes('SECRETTOKEN456'), 'Authorization is not in the access log');
    check(logText.includes('"GET /api/v0/users/current HTTP/1.1"'), 'access log has the path');
    console.log(`ok   access log (${ACCESS_LOG}) has no api_key / Authorization`);
  }

  // 5. an upstream that is down gives a JSON 502
  await new Promise((res) => stubs.sync.close(res));
  r = await request('PUT', '/api/v0/machines/1/cancel_maint');
  check(
    r.status === 502 && r.headers['content-type'] === 'application/json' && r.body.includes('bad_gateway'),
    `upstream down -> JSON 502 (got ${r.status} ${r.body})`,
  );
  console.log('ok   upstream down -> JSON 502');

  for (const s of Object.values(stubs)) s.close();
  if (failures) {
    console.log(`ROUTING CHECK FAILED: ${failures} failure(s)`);
    process.exit(1);
  }
  console.log(`ROUTING CHECK PASSED (${CASES.length} routes)`);
  process.exit(0);
}

main().catch((e) => {
  console.error('ROUTING CHECK ERROR:', e.message);
  process.exit(1);
});
