import {
  Body,
  type CanActivate,
  Controller,
  Delete,
  type ExecutionContext,
  Get,
  HttpCode,
  Inject,
  Injectable,
  Post,
  Put,
  Req,
  Res,
  SetMetadata,
  UseGuards,
  createParamDecorator,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  ApiError,
  type EventMetadata,
  isRefusal,
  type PermissionCategory,
  scopeAllows,
} from '@rigmarket/contracts';
import {
  AUTH_KEY_LOOKUP,
  type AuthKeyLookup,
  type AuthenticatedRequest,
  badString,
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

const TFA_ADMITS = 'rigmarket:tfa-admits';
/** Which callers a TFA route admits; TfaAuthGuard authenticates them before any validation. */
const Admit = (admits: Admits) => SetMetadata(TFA_ADMITS, admits);

interface TfaRequest extends AuthenticatedRequest {
  tfaCaller?: TfaCaller;
}

/** The caller TfaAuthGuard found, with the request's event metadata. */
const Caller = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): { caller: TfaCaller; metadata: EventMetadata } => {
    const request = ctx.switchToHttp().getRequest<TfaRequest>();
    if (!request.tfaCaller) throw authError();
    return { caller: request.tfaCaller, metadata: metadataOf(request) };
  },
);

/**
 * Authentication before validation: a guard runs before the body's DTO is validated, so an anonymous caller
 * (or a wrong key) gets 403 auth_error whatever the body holds, never a 400 that would tell a stranger
 * about the route's fields. A tfa_secret is read from the raw body only where the route admits one.
 */
@Injectable()
export class TfaAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tfa: TfaService,
    @Inject(AUTH_KEY_LOOKUP) private readonly keys: AuthKeyLookup,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const admits = this.reflector.get<Admits | undefined>(TFA_ADMITS, context.getHandler());
    if (!admits) throw authError();
    const request = context.switchToHttp().getRequest<TfaRequest>();
    const body: unknown = request.body;
    const given =
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>).secret : undefined;
    // A secret that could not have been issued (not a string, too long, NUL) authenticates no one.
    const secret =
      admits.secret && typeof given === 'string' && badString(given, 200) === undefined ? given : undefined;
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
      } else if (secret) {
        const userId = await this.tfa.userOfSecret(secret);
        if (userId === null) throw authError();
        caller = { userId, keyId: null, scope: null };
      }
    } catch (error) {
      if (isRefusal(error)) throw error;
      throw new ApiError(503, 'service_unavailable', 'The authorization store is unavailable; retry shortly');
    }
    if (!caller) throw authError();
    request.tfaCaller = caller;
    return true;
  }
}

const WITH_SECRET: Admits = { secret: true, bearer: true, needs: 'user_write' };
const BEARER_WRITE: Admits = { secret: false, bearer: true, needs: 'user_write' };
const BEARER_READ: Admits = { secret: false, bearer: true, needs: 'user_read' };

/**
 * /api/v0/tfa/. Not behind BearerGuard: the routes admit logged-out holders of a tfa_secret, and
 * every refusal is 403 auth_error rather than the guard's 401 (TfaAuthGuard).
 */
@Controller('api/v0/tfa')
@UseGuards(TfaAuthGuard)
export class TfaController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @Admit(WITH_SECRET)
  @HttpCode(200)
  async login(
    @Req() request: AuthenticatedRequest,
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: LoginRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
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
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async remove(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: RemoveRequest,
  ) {
    return this.commands.execute(new RemoveTfaMethodCommand(caller.userId, body, metadata));
  }

  @Post('email')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  async email(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    // Validated (after authentication) though only the guard reads its secret.
    @Body() _body: SecretRequest,
  ) {
    return this.commands.execute(new SendTfaEmailCodeCommand(caller, metadata));
  }

  @Post('sms')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  async sms(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: SmsRequest,
  ) {
    return this.commands.execute(
      new SendTfaSmsCodeCommand(caller, body.phone_number ?? null, body.tfa_method_id ?? null, metadata),
    );
  }

  @Post('sms/resend')
  @Admit(WITH_SECRET)
  @HttpCode(200)
  async resend(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: SmsRequest,
  ) {
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

  @Admit(BEARER_READ)
  @Get('status')
  async status(@Caller() { caller }: { caller: TfaCaller; metadata: EventMetadata }) {
    return this.queries.execute(new GetTfaStatusQuery(caller.userId));
  }

  @Post('authorize-new-method')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async authorize(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: AuthorizeRequest,
  ) {
    return this.commands.execute(new StartTfaAuthorizationCommand(caller.userId, body, metadata));
  }

  @Put('authorize-new-method')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async confirmAuthorization(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: AuthorizeConfirmRequest,
  ) {
    return this.commands.execute(
      new ConfirmTfaAuthorizationCommand(caller.userId, body.code, body.secret, metadata),
    );
  }

  @Post('totp-setup')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async totpSetup(@Caller() { caller }: { caller: TfaCaller; metadata: EventMetadata }) {
    return this.queries.execute(new NewTotpSecretQuery(caller.userId));
  }

  @Post('confirm-new')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async confirmNew(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: ConfirmNewRequest,
  ) {
    if (body.tfa_method === 'email')
      throw new ApiError(400, 'invalid_tfa_method', 'E-mail cannot be stored as a method: use sms or totp');
    return this.commands.execute(
      new ConfirmNewTfaMethodCommand(caller.userId, { ...body, tfa_method: body.tfa_method }, metadata),
    );
  }

  @Put('update')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async update(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: UpdateRequest,
  ) {
    return this.commands.execute(new UpdateTfaMethodCommand(caller.userId, body, metadata));
  }

  @Put('regen-backup-codes')
  @Admit(BEARER_WRITE)
  @HttpCode(200)
  async regen(
    @Caller() { caller, metadata }: { caller: TfaCaller; metadata: EventMetadata },
    @Body() body: ProofRequest,
  ) {
    return this.commands.execute(new RegenerateBackupCodesCommand(caller.userId, body, metadata));
  }
}
