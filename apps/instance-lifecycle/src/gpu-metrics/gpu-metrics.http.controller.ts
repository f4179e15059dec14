import { Controller, Get, Inject, Query } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { ANSWERS, QUERIES } from '../instance-lifecycle.openapi';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { currentGpuMetrics, gpuLocations, gpuMetricsHistory, machineFilter } from './gpu-metrics.queries';
import { GPU_METRICS_OPTIONS, type GpuMetricsOptions } from './gpu-metrics.store';

/**
 * `vastai show gpu-metrics | gpu-trends | gpu-locations`: the caller's own machines' GPUs (counts, prices and
 * the host agents' samples), their history, and the market's GPUs by place. A caller without a machine
 * gets `needs_machine: true`, as the CLI expects.
 */
@Controller('api/v0/metrics/gpu')
@Authenticated()
export class GpuMetricsController {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(GPU_METRICS_OPTIONS) private readonly options: GpuMetricsOptions,
  ) {}

  @Get('current')
  @RequirePermission('machine_read')
  @ApiContract({ query: QUERIES.gpuMetrics, ok: ANSWERS.gpuMetricsCurrent })
  current(@Query() query: Record<string, unknown>, @CallOf() { caller }: Call) {
    return currentGpuMetrics(this.runtime.db, this.options, caller.userId, machineFilter(query));
  }

  @Get('history')
  @RequirePermission('machine_read')
  @ApiContract({ query: QUERIES.gpuMetricsHistory, ok: ANSWERS.gpuMetricsHistory })
  history(@Query() query: Record<string, unknown>, @CallOf() { caller }: Call) {
    return gpuMetricsHistory(this.runtime.db, this.options, caller.userId, query);
  }

  @Get('locations')
  @RequirePermission('machine_read')
  @ApiContract({ ok: ANSWERS.gpuLocations })
  locations(@CallOf() { caller }: Call) {
    return gpuLocations(this.runtime.db, caller.userId);
  }
}
