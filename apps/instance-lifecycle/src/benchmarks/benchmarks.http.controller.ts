import { Controller, Get, Inject, Query } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { ApiContract, Authenticated, RequirePermission } from '@rigmarket/http-kit';
import { ANSWERS, QUERIES } from '../instance-lifecycle.openapi';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { searchBenchmarks } from './benchmarks.queries';

/** `vastai search benchmarks [query]`: the machines' benchmark records, as their host agents measured them. */
@Controller('api/v0/benchmarks')
@Authenticated()
export class BenchmarksController {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get()
  @RequirePermission('machine_read')
  @ApiContract({ query: QUERIES.benchmarks, ok: ANSWERS.benchmarks })
  search(@Query() query: Record<string, unknown>) {
    return searchBenchmarks(this.runtime.db, query);
  }
}
