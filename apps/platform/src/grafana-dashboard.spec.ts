import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsRegistry } from '@rigmarket/event-sourcing';
// Imported for their metrics: each registers its own in the process's registry when loaded.
import '@rigmarket/http-kit';
import '@rigmarket/instance-lifecycle';
import '@rigmarket/marketplace-api';

/**
 * infra/grafana/rigmarket.json cannot rot: every metric its queries name is one the platform exports (a
 * histogram's _bucket, _sum and _count included), and every label a query selects or groups by is one of
 * that metric's labels.
 */
interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}
const dashboard = JSON.parse(
  readFileSync(join(__dirname, '../../../infra/grafana/rigmarket.json'), 'utf8'),
) as { panels: Panel[]; templating: { list: Array<{ query?: unknown }> } };

const exported = new Map(
  metricsRegistry.getMetricsAsArray().map((m) => {
    const metric = m as unknown as { name: string; labelNames?: string[]; constructor: { name: string } };
    return [metric.name, { kind: metric.constructor.name, labels: new Set(metric.labelNames ?? []) }];
  }),
);

/** The exported metric a series name belongs to (a histogram's suffixed series to the histogram). */
function metricOf(series: string) {
  const direct = exported.get(series);
  if (direct) return direct;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  const histogram = exported.get(base);
  if (histogram?.kind === 'Histogram') return { ...histogram, labels: new Set([...histogram.labels, 'le']) };
  return undefined;
}

const expressions = [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr }))),
  ...dashboard.templating.list
    .filter((v) => typeof v.query === 'string' && v.query.includes('rigmarket_'))
    .map((v) => ({ where: 'a template variable', expr: v.query as string })),
];

describe('Grafana dashboard (infra/grafana/rigmarket.json)', () => {
  it('has queries to check', () => {
    expect(expressions.length).toBeGreaterThan(15);
  });

  it.each(expressions)('$where: $expr names exported metrics and their labels', ({ expr }) => {
    const names = [...expr.matchAll(/\b(rigmarket_[a-z_]+)\b/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const metric = metricOf(name);
      expect({ name, exported: metric !== undefined }).toEqual({ name, exported: true });
      // Labels selected right after the name: name{label="...", ...}
      const selector = new RegExp(`${name}\\{([^}]*)\\}`).exec(expr)?.[1] ?? '';
      for (const [, label] of selector.matchAll(/(\w+)\s*(?:=~|!=|!~|=)/g))
        expect({ name, label, known: metric!.labels.has(label!) }).toEqual({ name, label, known: true });
    }
    // Labels grouped by must be on one of the metrics named.
    for (const [, list] of expr.matchAll(/by \(([^)]*)\)/g))
      for (const label of list!.split(',').map((l) => l.trim()))
        expect({ label, known: names.some((n) => metricOf(n)!.labels.has(label)) }).toEqual({
          label,
          known: true,
        });
  });
});
