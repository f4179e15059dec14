import {
  Body,
  Controller,
  Delete,
  type ExecutionContext,
  Get,
  HttpCode,
  Post,
  Put,
  Req,
  Res,
  applyDecorators,
  createParamDecorator,
} from '@nestjs/common';
import type { EventMetadata, PermissionCategory } from '@rigmarket/contracts';
import {
  ApiContract,
  Admits,
  Authenticated,
  type AuthenticatedRequest,
  metadataOf,
  RequirePermission,
} from '@rigmarket/http-kit';
import type { Response } from 'express';
import {
  AuthorizeConfirmRequest,
  AuthorizeRequest,
  ConfirmNewRequest,
  LoginRequest,
  ProofRequest,
  RemoveRequest,
  SecretRequest,
  SmsRequest,
  UpdateRequest,
} from './tfa.dto';
import type { TfaCaller } from './tfa.io';
import { TfaMethodsService } from './tfa-methods.service';
import { TfaService } from './tfa.service';
import { ANSWERS, BODIES, TFA_ERRORS } from '../identity.openapi';

const SESSION_COOKIE = 'session_key';

/** Which callers a TFA route admits (the spec's auth matrix) and what a scoped bearer key needs. */
const Admit = ({ secret, needs }: { secret: boolean; needs: PermissionCategory }) =>
  applyDecorators(...(secret ? [Admits('tfa_secret')] : []), RequirePermission(needs));

/** The caller the AuthGuard found, as the 2FA services take it, with the request's event metadata. */
const Caller = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): { caller: TfaCaller; metadata: EventMetadata } => {
    const request = ctx.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = request.principal!;
    const keyId = principal.credential === 'tfa_secret' ? null : principal.keyId;
    return {
      caller: { userId: principal.userId, keyId, scope: principal.scope },
      metadata: metadataOf(request),
    };
  },
);

const WITH_SECRET = { secret: true, needs: 'user_write' } as const;
const BEARER_WRITE = { secret: false, needs: 'user_write' } as const;
const BEARER_READ = { secret: false, needs: 'user_read' } as const;

/**
 * /api/v0/tfa/. The routes admit logged-out holders of a tfa_secret besides bearer keys, and every refusal
 * is 403 auth_error rather than 401 (a stranger learns nothing of the route), before any field is validated.
 */
@Controller('api/v0/tfa')
@Authenticated({ refusal: 'auth_error' })
export class TfaController {
  constructor(
    private readonly tfa: TfaService,
    private readonly methods: TfaMethodsService,
  ) {}

  @Post()
  @Admit(WITH_SECRET)
  @HttpCode(200)
  @ApiContract({ body: BODIES.tfaLogin, ok: ANSWERS.tfaLogin, errors: TFA_ERRORS })
  async login(
    @Req() request: AuthenticatedRequest,
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: LoginRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const { body: result, sessionKey } = await this.tfa.completeLogin(caller, body, metadata);
    if (caller.keyId !== null) return { ...result, session_key: sessionKey };
    response.cookie(SESSION_COOKIE, sessionKey, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: request.secure,
    });
    return result;
  }

  @Delete()
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.tfaRemove, ok: ANSWERS.tfaRemoved, errors: TFA_ERRORS })
  async remove(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: RemoveRequest,
  ) {
    return this.methods.remove(caller.userId, body, metadata);
  }

  @Post('email')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  @ApiContract({ body: BODIES.secret, ok: ANSWERS.secretSent, errors: TFA_ERRORS })
  async email(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    // Validated (after authentication) though only the guard reads its secret.
    @Body() _body: SecretRequest,
  ) {
    return this.tfa.sendEmail(caller, metadata);
  }

  @Post('sms')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  @ApiContract({ body: BODIES.sms, ok: ANSWERS.secretSent, errors: TFA_ERRORS })
  async sms(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: SmsRequest,
  ) {
    return this.tfa.sendSms(caller, body.phone_number ?? null, body.tfa_method_id ?? null, metadata);
  }

  @Post('sms/resend')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  @ApiContract({ body: BODIES.sms, ok: ANSWERS.secretSent, errors: TFA_ERRORS })
  async resend(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: SmsRequest,
  ) {
    return this.tfa.resendSms(
      caller,
      body.secret ?? null,
      body.phone_number ?? null,
      body.tfa_method_id ?? null,
      metadata,
    );
  }

  @Admit(BEARER_READ)
  @Get('status')
  @ApiContract({ ok: ANSWERS.tfaStatus, errors: TFA_ERRORS })
  async status(@Caller() { caller }: { caller: TfaCaller; metadata: EventMetadata }) {
    return this.methods.status(caller.userId);
  }

  @Post('authorize-new-method')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.authorize, ok: ANSWERS.authorizeStarted, errors: TFA_ERRORS })
  async authorize(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: AuthorizeRequest,
  ) {
    return this.tfa.authorizeStart(caller.userId, body, metadata);
  }

  @Put('authorize-new-method')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.authorizeConfirm, ok: ANSWERS.msg, errors: TFA_ERRORS })
  async confirmAuthorization(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: AuthorizeConfirmRequest,
  ) {
    return this.tfa.authorizeConfirm(caller.userId, body.code, body.secret, metadata);
  }

  @Post('totp-setup')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ ok: ANSWERS.totpSetup, errors: TFA_ERRORS })
  async totpSetup(@Caller() { caller }: { caller: TfaCaller; metadata: EventMetadata }) {
    return this.methods.totpSetup(caller.userId);
  }

  @Post('confirm-new')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.confirmNew, ok: ANSWERS.methodAdded, errors: TFA_ERRORS })
  async confirmNew(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: ConfirmNewRequest,
  ) {
    return this.methods.confirmNew(caller.userId, body, metadata);
  }

  @Put('update')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.tfaUpdate, ok: ANSWERS.methodUpdated, errors: TFA_ERRORS })
  async update(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: UpdateRequest,
  ) {
    return this.methods.update(caller.userId, body, metadata);
  }

  @Put('regen-backup-codes')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  @ApiContract({ body: BODIES.proof, ok: ANSWERS.backupCodes, errors: TFA_ERRORS })
  async regen(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: ProofRequest,
  ) {
    return this.methods.regenerateBackupCodes(caller.userId, body, metadata);
  }
}
