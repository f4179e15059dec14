import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Put, Req, Res } from '@nestjs/common';
import { ApiError, type EventMetadata, type PermissionCategory, scopeAllows } from '@rigmarket/contracts';
import {
  AUTH_KEY_LOOKUP,
  type AuthKeyLookup,
  type AuthenticatedRequest,
  bearerValue,
  metadataOf,
} from '@rigmarket/http-kit';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { Response } from 'express';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  CompleteTfaLoginCommand,
  ConfirmNewTfaMethodCommand,
  ConfirmTfaAuthorizationCommand,
  GetTfaStatusQuery,
  NewTotpSecretQuery,
  RegenerateBackupCodesCommand,
  RemoveTfaMethodCommand,
  ResendTfaSmsCodeCommand,
  SendTfaEmailCodeCommand,
  SendTfaSmsCodeCommand,
  StartTfaAuthorizationCommand,
  UpdateTfaMethodCommand,
} from './tfa.handlers';
import { type TfaCaller, TfaService } from './tfa.service';

const METHODS = ['sms', 'totp', 'email'] as const;
const E164 = /^\+[1-9]\d{6,14}$/;
const tfaMethodMessage = { message: 'tfa_method must be one of sms, totp, email' };

export class SecretRequest {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  secret?: string;
}

export class ProofRequest extends SecretRequest {
  @IsOptional()
  @IsIn(METHODS, tfaMethodMessage)
  tfa_method?: 'sms' | 'totp' | 'email';

  @IsOptional()
  @IsString()
  @MaxLength(20)
  code?: string;

  /** The vastai CLI sends it as a string. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  tfa_method_id?: number;

  @IsOptional()
  @IsString()
  @MaxLength(40)
  backup_code?: string;
}

export class LoginRequest extends ProofRequest {
  @IsOptional()
  @IsBoolean()
  admin?: boolean;
}

export class RemoveRequest extends ProofRequest {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  target_id?: number;
}

export class SmsRequest extends SecretRequest {
  @IsOptional()
  @IsString()
  @Matches(E164, { message: 'phone_number must be an E.164 number such as +14155550123' })
  phone_number?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  tfa_method_id?: number;
}

export class AuthorizeRequest {
  @IsOptional()
  @IsIn(METHODS, tfaMethodMessage)
  tfa_method?: 'sms' | 'totp' | 'email';

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  tfa_method_id?: number;

  @IsOptional()
  @IsString()
  @MaxLength(40)
  backup_code?: string;
}

export class AuthorizeConfirmRequest extends SecretRequest {
  @IsOptional()
  @IsString()
  @MaxLength(20)
  code?: string;
}

export class ConfirmNewRequest extends SecretRequest {
  @IsIn(METHODS, tfaMethodMessage)
  tfa_method: 'sms' | 'totp' | 'email';

  @IsOptional()
  @IsString()
  @MaxLength(20)
  code?: string;

  @IsOptional()
  @IsString()
  @Matches(E164, { message: 'phone_number must be an E.164 number such as +14155550123' })
  phone_number?: string;

  @IsOptional()
  @IsString()
  @MaxLength(30, { message: 'label must be at most 30 characters' })
  label?: string;
}

export class UpdateRequest {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  tfa_method_id?: number;

  @IsOptional()
  @IsIn(METHODS, tfaMethodMessage)
  tfa_method?: 'sms' | 'totp' | 'email';

  @IsOptional()
  @IsString()
  @MaxLength(30, { message: 'label must be at most 30 characters' })
  label?: string;

  @IsOptional()
  @IsBoolean()
  is_primary?: boolean;
}

/** Which callers a route admits (the spec's auth matrix). */
interface Admits {
  /** A logged-out caller holding a tfa_secret (from the password login or a code sent to it). */
  secret: boolean;
  bearer: boolean;
  /** What a scoped bearer key needs (reads: user_read; changes: user_write). */
  needs: PermissionCategory;
}

const authError = () =>
  new ApiError(
    403,
    'auth_error',
    'No valid authentication: send a bearer key, or the tfa_secret from your login',
  );
const SESSION_COOKIE = 'session_key';

/**
 * /api/v0/tfa/. Not behind BearerGuard: the routes admit logged-out holders of a tfa_secret, and
 * every refusal is 403 auth_error rather than the guard's 401.
 */
@Controller('api/v0/tfa')
export class TfaController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly tfa: TfaService,
    @Inject(AUTH_KEY_LOOKUP) private readonly keys: AuthKeyLookup,
  ) {}

  private async caller(
    request: AuthenticatedRequest,
    secret: string | undefined,
    admits: Admits,
  ): Promise<{ caller: TfaCaller; metadata: EventMetadata }> {
    const bearer = bearerValue(request);
    let caller: TfaCaller | null = null;
    try {
      if (bearer) {
        if (!admits.bearer) throw authError();
        const key = await this.keys.find(bearer);
        if (!key) throw authError();
        request.principal = key;
        if (!scopeAllows(key.scope, admits.needs)) {
          throw new ApiError(
            403,
            'forbidden',
            `This API key lacks the ${admits.needs} permission needed for this request`,
          );
        }
        caller = { userId: key.userId, keyId: key.keyId, scope: key.scope };
      } else if (admits.secret && secret) {
        const userId = await this.tfa.userOfSecret(secret);
        if (userId === null) throw authError();
        caller = { userId, keyId: null, scope: null };
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw new ApiError(503, 'service_unavailable', 'The authorization store is unavailable; retry shortly');
    }
    if (!caller) throw authError();
    return { caller, metadata: metadataOf(request) };
  }

  @Post()
  @HttpCode(200)
  async login(
    @Req() request: AuthenticatedRequest,
    @Body() body: LoginRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const { caller, metadata } = await this.caller(request, body.secret, {
      secret: true,
      bearer: true,
      needs: 'user_write',
    });
    const { body: result, sessionKey } = await this.commands.execute(
      new CompleteTfaLoginCommand(caller, body, metadata),
    );
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
  @HttpCode(200)
  async remove(@Req() request: AuthenticatedRequest, @Body() body: RemoveRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(new RemoveTfaMethodCommand(caller.userId, body, metadata));
  }

  @Post('email')
  @HttpCode(200)
  async email(@Req() request: AuthenticatedRequest, @Body() body: SecretRequest) {
    const { caller, metadata } = await this.caller(request, body.secret, {
      secret: true,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(new SendTfaEmailCodeCommand(caller, metadata));
  }

  @Post('sms')
  @HttpCode(200)
  async sms(@Req() request: AuthenticatedRequest, @Body() body: SmsRequest) {
    const { caller, metadata } = await this.caller(request, body.secret, {
      secret: true,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(
      new SendTfaSmsCodeCommand(caller, body.phone_number ?? null, body.tfa_method_id ?? null, metadata),
    );
  }

  @Post('sms/resend')
  @HttpCode(200)
  async resend(@Req() request: AuthenticatedRequest, @Body() body: SmsRequest) {
    const { caller, metadata } = await this.caller(request, body.secret, {
      secret: true,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(
      new ResendTfaSmsCodeCommand(
        caller,
        body.secret ?? null,
        body.phone_number ?? null,
        body.tfa_method_id ?? null,
        metadata,
      ),
    );
  }

  @Get('status')
  async status(@Req() request: AuthenticatedRequest) {
    const { caller } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_read',
    });
    return this.queries.execute(new GetTfaStatusQuery(caller.userId));
  }

  @Post('authorize-new-method')
  @HttpCode(200)
  async authorize(@Req() request: AuthenticatedRequest, @Body() body: AuthorizeRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(new StartTfaAuthorizationCommand(caller.userId, body, metadata));
  }

  @Put('authorize-new-method')
  @HttpCode(200)
  async confirmAuthorization(@Req() request: AuthenticatedRequest, @Body() body: AuthorizeConfirmRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(
      new ConfirmTfaAuthorizationCommand(caller.userId, body.code, body.secret, metadata),
    );
  }

  @Post('totp-setup')
  @HttpCode(200)
  async totpSetup(@Req() request: AuthenticatedRequest) {
    const { caller } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.queries.execute(new NewTotpSecretQuery(caller.userId));
  }

  @Post('confirm-new')
  @HttpCode(200)
  async confirmNew(@Req() request: AuthenticatedRequest, @Body() body: ConfirmNewRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    if (body.tfa_method === 'email')
      throw new ApiError(400, 'invalid_tfa_method', 'E-mail cannot be stored as a method: use sms or totp');
    return this.commands.execute(
      new ConfirmNewTfaMethodCommand(caller.userId, { ...body, tfa_method: body.tfa_method }, metadata),
    );
  }

  @Put('update')
  @HttpCode(200)
  async update(@Req() request: AuthenticatedRequest, @Body() body: UpdateRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(new UpdateTfaMethodCommand(caller.userId, body, metadata));
  }

  @Put('regen-backup-codes')
  @HttpCode(200)
  async regen(@Req() request: AuthenticatedRequest, @Body() body: ProofRequest) {
    const { caller, metadata } = await this.caller(request, undefined, {
      secret: false,
      bearer: true,
      needs: 'user_write',
    });
    return this.commands.execute(new RegenerateBackupCodesCommand(caller.userId, body, metadata));
  }
}
