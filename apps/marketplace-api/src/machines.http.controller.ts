import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { type AuthenticatedKey, BearerGuard, Principal, Public, RequirePermission } from '@rigmarket/http-kit';
import { SCHEMA } from './marketplace.context';
import { MARKETPLACE_RUNTIME } from './marketplace.tokens';

@Controller('api/v0')
@UseGuards(BearerGuard)
export class MachinesController {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  /** The caller's machines (`vastai show machines`). */
  @Get('machines')
  @RequirePermission('machine_read')
  async ownMachines(@Principal() principal: AuthenticatedKey) {
    const rows = await this.runtime.db.query<{ machine_id: number; gpu_name: string; num_gpus: number; listed: boolean; details: object }>(
      `SELECT machine_id, gpu_name, num_gpus, listed, details FROM ${SCHEMA}.machines WHERE owner_id = $1 ORDER BY machine_id`,
      [principal.userId],
    );
    return {
      success: true,
      machines: rows.map((r) => ({ ...r.details, id: Number(r.machine_id), gpu_name: r.gpu_name, num_gpus: Number(r.num_gpus), listed: r.listed })),
    };
  }

  /** No auth: the real CLI calls it at every start. */
  @Public()
  @Get('gpu_names/unique')
  async gpuNames() {
    const rows = await this.runtime.db.query<{ gpu_name: string }>(
      `SELECT DISTINCT gpu_name FROM ${SCHEMA}.machines WHERE listed ORDER BY gpu_name`,
    );
    return { success: true, gpu_names: rows.map((r) => r.gpu_name) };
  }
}
