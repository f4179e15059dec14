import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');

/** The edge's regex locations, in the order nginx tries them (first match wins). */
function edgeLocations(): { pattern: RegExp; upstream: string }[] {
  const template = readFileSync(join(ROOT, 'infra/nginx/nginx.conf.template'), 'utf8');
  return [...template.matchAll(/location ~ (\S+)\s+\{\s*proxy_pass http:\/\/(\w+);/g)].map((m) => ({
    pattern: new RegExp(m[1]!),
    upstream: m[2]!,
  }));
}

/**
 * Every path of the OpenAPI document reaches an app through the distributed edge: none falls through to the
 * edge's own JSON 404 (`location /api/`). Which app each reaches is checked by infra/nginx/test-routing.js
 * (edge-routing.int-spec.ts) with a real nginx.
 */
describe('the edge routing table', () => {
  it('has a location for every path of the OpenAPI document', () => {
    const document = JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as {
      paths: Record<string, unknown>;
    };
    const locations = edgeLocations();
    expect(locations.length).toBeGreaterThan(40);
    // probes and the document: the edge answers these itself, or each app is probed directly
    const notForApps = ['/healthz', '/readyz', '/api/v0/openapi.json', '/openapi.json'];
    const unrouted = Object.keys(document.paths)
      .filter((path) => !notForApps.includes(path))
      .filter((path) => {
        const concrete = `${path.replace(/\{[^}]+\}/g, '7')}/`;
        return !locations.some(
          ({ pattern }) => pattern.test(concrete) || pattern.test(concrete.slice(0, -1)),
        );
      });
    expect(unrouted).toEqual([]);
  });
});
