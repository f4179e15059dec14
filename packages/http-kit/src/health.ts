import { Controller, Get, HttpCode, Inject, Module, type DynamicModule } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import { Public } from './auth.guard';
import { ApiContract, objectOf } from './openapi-contract';

const STATUS = (status: string) =>
  objectOf({ success: { type: 'boolean', const: true }, status: { type: 'string', const: status } });

export const READINESS_CHECK = Symbol('READINESS_CHECK');
export type ReadinessCheck = () => Promise<void>;

@Controller()
export class HealthController {
  constructor(@Inject(READINESS_CHECK) private readonly check: ReadinessCheck) {}

  @Public()
  @Get('healthz')
  @ApiContract({ ok: STATUS('ok') })
  health() {
    return { success: true, status: 'ok' };
  }

  @Public()
  @Get('readyz')
  @HttpCode(200)
  @ApiContract({ ok: STATUS('ready'), errors: { 503: ['service_unavailable'] } })
  async ready() {
    try {
      await this.check();
    } catch (error) {
      throw new ApiError(503, 'service_unavailable', `Not ready: ${(error as Error).message}`);
    }
    return { success: true, status: 'ready' };
  }
}

/**
 * The check, run once for all the probes that arrive while it runs: `/readyz` needs no key and is not rate
 * limited (orchestrators probe it), and its check reads every context's flow, so a burst of probes costs one.
 */
export function sharedWhileRunning(check: ReadinessCheck): ReadinessCheck {
  let running: Promise<void> | undefined;
  return () =>
    (running ??= check().finally(() => {
      running = undefined;
    }));
}

@Module({})
export class HealthModule {
  static forRoot(check: ReadinessCheck): DynamicModule {
    return {
      module: HealthModule,
      controllers: [HealthController],
      providers: [{ provide: READINESS_CHECK, useValue: sharedWhileRunning(check) }],
    };
  }
}
