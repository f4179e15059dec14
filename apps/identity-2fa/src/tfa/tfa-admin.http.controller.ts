import { Body, Controller, HttpCode, Inject, Param, ParseIntPipe, Put } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsOptional, Matches } from 'class-validator';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { findUser } from '../read-models/users/queries';
import { TfaMethodsService } from './tfa-methods.service';
import { ANSWERS, BODIES } from '../identity.openapi';

export class LegacyTfaImport {
  /** The number on file that the legacy SMS 2FA sends to (E.164); a backup-code regeneration backfills it. */
  @IsOptional()
  @Matches(/^\+[1-9]\d{6,14}$/, { message: 'phone_number must be in E.164 format, e.g. +14155550123' })
  phone_number?: string;
}

/**
 * The operator's import of an account that had 2FA before method rows existed (a migration from an older
 * system): 2FA on, no methods, the phone on file. The account then answers `tfa_status: legacy` and
 * `legacy_tfa_user` until its owner regenerates backup codes. Admins only.
 */
@Controller('api/v0/admin/users')
@Authenticated()
export class TfaAdminController {
  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    private readonly methods: TfaMethodsService,
  ) {}

  @Put(':id/legacy-2fa')
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.legacyTfa, ok: ANSWERS.legacyImported, errors: { 404: ['user_not_found'] } })
  async importLegacy(
    @Param('id', ParseIntPipe) userId: number,
    @Body() body: LegacyTfaImport,
    @CallOf() { caller, metadata }: Call,
  ) {
    if (!(await findUser(this.runtime, 'user_id = $1', caller.userId))?.is_admin)
      throw ApiError.forbidden('Only administrators can import legacy 2FA accounts');
    if (!(await findUser(this.runtime, 'user_id = $1', userId)))
      throw ApiError.notFound('No such user', 'user_not_found');
    await this.methods.markLegacy(userId, body.phone_number ?? null, metadata);
    return { success: true, user_id: userId, tfa_status: 'legacy' };
  }
}
