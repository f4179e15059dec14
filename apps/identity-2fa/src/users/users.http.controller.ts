import { Body, Controller, Get, HttpCode, Post, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';
import { Query } from '@nestjs/common';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  OptionalCaller,
  Public,
  RequestMetadata,
  type Caller,
  RequirePermission,
} from '@rigmarket/http-kit';
import { ApiError, scopeAllows } from '@rigmarket/contracts';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import {
  ChangePasswordCommand,
  GetUserQuery,
  ListSubaccountsQuery,
  UpdateUserCommand,
  LoginCommand,
  LogoutCommand,
  RegisterUserCommand,
  VerifyEmailCommand,
} from './users.handlers';
import { ANSWERS, BODIES, USER } from '../identity.openapi';
import { str } from '@rigmarket/http-kit';

export class RegisterRequest {
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;

  @IsString()
  @MinLength(8, { message: 'password must be at least 8 characters long' })
  @MaxLength(200)
  password: string;

  @IsOptional()
  @IsString()
  @Length(1, 64)
  username?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  full_name?: string;

  /** `vastai create subaccount`: "me" (or the caller's own id) makes the new account a child of the caller's. */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @Matches(/^(me|[0-9]{1,10})$/, { message: 'parent_id must be "me" (or your own user id as a string)' })
  parent_id?: string | number | null;

  /** A subaccount that only hosts machines (`--type host`). */
  @IsOptional()
  @IsBoolean()
  host_only?: boolean;
}

const ADDRESS_FIELD = [IsOptional(), ValidateIf((_, value) => value !== null), IsString(), MaxLength(200)];
const addressField = (): PropertyDecorator => (target, key) => ADDRESS_FIELD.forEach((d) => d(target, key));
const MONEY_LIMIT = 1_000_000;

/**
 * PUT /api/v0/users/ (`vastai set user --file f.json`): the settable fields; others (what `show user --raw`
 * prints, for instance) are ignored, so a file saved from it can be edited and sent back.
 */
export class SetUserRequest {
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(200)
  fullname?: string | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(200)
  full_name?: string | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(16_384)
  ssh_key?: string | null;

  @addressField() billaddress_name?: string | null;
  @addressField() billaddress_line1?: string | null;
  @addressField() billaddress_line2?: string | null;
  /** The names the CLI's help gives for the two address lines. */
  @addressField() billaddress_addr1?: string | null;
  @addressField() billaddress_addr2?: string | null;
  @addressField() billaddress_city?: string | null;
  @addressField() billaddress_zip?: string | null;
  @addressField() billaddress_country?: string | null;
  @addressField() billaddress_taxinfo?: string | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @Matches(/^\+?[0-9 ()-]{4,32}$/, {
    message: 'phone_number must be a phone number (digits, +, spaces, dashes)',
  })
  phone_number?: string | null;

  @IsOptional()
  @IsBoolean()
  balance_threshold_enabled?: boolean;

  @IsOptional()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MONEY_LIMIT)
  balance_threshold?: number;

  @IsOptional()
  @Type(() => Number)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MONEY_LIMIT)
  autobill_threshold?: number;
}

const SETTABLE = [
  'fullname',
  'ssh_key',
  'billaddress_name',
  'billaddress_line1',
  'billaddress_line2',
  'billaddress_city',
  'billaddress_zip',
  'billaddress_country',
  'billaddress_taxinfo',
  'phone_number',
  'balance_threshold_enabled',
  'balance_threshold',
  'autobill_threshold',
] as const;

function changesOf(body: SetUserRequest): ConstructorParameters<typeof UpdateUserCommand>[1] {
  const pick = <T>(...values: (T | undefined)[]): T | undefined =>
    values.find((value) => value !== undefined);
  const settings = {
    billaddress_name: body.billaddress_name,
    billaddress_line1: pick(body.billaddress_line1, body.billaddress_addr1),
    billaddress_line2: pick(body.billaddress_line2, body.billaddress_addr2),
    billaddress_city: body.billaddress_city,
    billaddress_zip: body.billaddress_zip,
    billaddress_country: body.billaddress_country,
    billaddress_taxinfo: body.billaddress_taxinfo,
    phone_number: body.phone_number,
    balance_threshold_enabled: body.balance_threshold_enabled,
    balance_threshold: body.balance_threshold,
    autobill_threshold: body.autobill_threshold,
  };
  return {
    fullName: pick(body.fullname, body.full_name),
    sshKey: body.ssh_key,
    settings: Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)),
  };
}

export class VerifyEmailRequest {
  @IsEmail()
  email: string;

  @IsString()
  @Length(1, 200)
  code: string;
}

export class LoginRequest {
  /** E-mail or username. */
  @IsOptional()
  @IsString()
  @MaxLength(254)
  username?: string;

  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;

  @IsString()
  @MaxLength(200)
  password: string;
}

export class ChangePasswordRequest {
  @IsString()
  @MaxLength(200)
  old_password: string;

  @IsString()
  @MinLength(8, { message: 'new_password must be at least 8 characters long' })
  @MaxLength(200)
  new_password: string;
}

@Controller('api/v0/users')
@Authenticated()
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Public({ identifiesCaller: true })
  @Post()
  @ApiContract({
    status: 201,
    body: BODIES.register,
    ok: ANSWERS.registered,
    errors: {
      401: ['missing_key', 'invalid_key'],
      403: ['forbidden'],
      409: ['user_exists', 'too_many_subaccounts'],
    },
  })
  async register(
    @Body() body: RegisterRequest,
    @RequestMetadata() metadata: EventMetadata,
    @OptionalCaller() caller: Caller | undefined,
  ) {
    const { user } = await this.commands.execute(
      new RegisterUserCommand(
        body.email,
        body.password,
        body.username ?? null,
        body.full_name ?? null,
        metadata,
        parentOf(body, caller),
      ),
    );
    return {
      success: true,
      user,
      msg: 'Account created. A verification code was sent to your e-mail address.',
    };
  }

  @Public()
  @Post('verify_email')
  @HttpCode(200)
  @ApiContract({
    body: BODIES.verifyEmail,
    ok: ANSWERS.registered,
    errors: { 400: ['invalid_verification_token', 'verification_token_expired'], 404: ['user_not_found'] },
  })
  async verifyEmail(@Body() body: VerifyEmailRequest, @RequestMetadata() metadata: EventMetadata) {
    const { user } = await this.commands.execute(new VerifyEmailCommand(body.email, body.code, metadata));
    return { success: true, user, msg: 'E-mail address verified.' };
  }

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiContract({ body: BODIES.login, ok: ANSWERS.login, errors: { 401: ['invalid_credentials'] } })
  async login(@Body() body: LoginRequest, @RequestMetadata() metadata: EventMetadata) {
    const result = await this.commands.execute(
      new LoginCommand(body.username ?? body.email ?? '', body.password, metadata),
    );
    if (result.tfaSecret !== null) {
      return {
        success: true,
        tfa_required: true,
        tfa_secret: result.tfaSecret,
        msg: 'Two Factor Authentication required: complete the login on /api/v0/tfa/',
      };
    }
    return { ...result.user, success: true, session_key: result.sessionKey };
  }

  /** Ends the calling session (a key from POST users/login/ or the 2FA login). */
  @Post('logout')
  @HttpCode(200)
  @ApiContract({ ok: ANSWERS.msg })
  async logout(@CallOf() { caller: principal, metadata }: Call) {
    await this.commands.execute(
      new LogoutCommand(principal.userId, principal.keyId, principal.kind, metadata),
    );
    return { success: true, msg: 'Logged out: this session key no longer works.' };
  }

  /** Sets a new password after checking the current one, and ends every session of the account. */
  @Put('password')
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.changePassword,
    ok: ANSWERS.passwordChanged,
    errors: { 403: ['wrong_password'] },
  })
  async changePassword(
    @CallOf() { caller: principal }: Call,
    @Body() body: ChangePasswordRequest,
    @RequestMetadata() metadata: EventMetadata,
  ) {
    const { revoked } = await this.commands.execute(
      new ChangePasswordCommand(principal.userId, body.old_password, body.new_password, metadata),
    );
    return {
      success: true,
      revoked_sessions: revoked,
      msg: 'Password changed; every login session of the account was ended (API keys keep working).',
    };
  }

  /** `vastai set user --file f.json`: the account's name, SSH key, billing address, phone and thresholds. */
  @Put()
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.setUser, ok: ANSWERS.userUpdated, errors: { 400: ['no_settable_field'] } })
  async update(@CallOf() { caller: principal, metadata }: Call, @Body() body: SetUserRequest) {
    const changes = changesOf(body);
    if (
      changes.fullName === undefined &&
      changes.sshKey === undefined &&
      Object.keys(changes.settings).length === 0
    ) {
      throw new ApiError(
        400,
        'no_settable_field',
        `Nothing to change: give at least one of ${SETTABLE.join(', ')}`,
      );
    }
    const user = await this.commands.execute(new UpdateUserCommand(principal.userId, changes, metadata));
    return { success: true, user, msg: 'Account settings saved.' };
  }

  @Get('current')
  @RequirePermission('user_read')
  @ApiContract({ ok: USER, errors: { 404: ['user_not_found'] } })
  current(@CallOf() { caller: principal }: Call) {
    return this.queries.execute(new GetUserQuery(principal.userId));
  }
}

/**
 * The parent of a subaccount being registered: the calling account, when the body names it (`parent_id: "me"`
 * or its own id). Naming another account, or no valid key, is refused.
 */
function parentOf(
  body: RegisterRequest,
  caller: Caller | undefined,
): { userId: number; hostOnly: boolean } | null {
  if (body.parent_id === undefined || body.parent_id === null) return null;
  if (!caller) {
    throw new ApiError(401, 'missing_key', "Creating a subaccount needs the parent account's API key");
  }
  if (!scopeAllows(caller.scope, 'user_write')) {
    throw ApiError.forbidden('This API key lacks the user_write permission needed to create a subaccount');
  }
  if (body.parent_id !== 'me' && Number(body.parent_id) !== caller.userId) {
    throw ApiError.forbidden('A subaccount can only be created under your own account (parent_id "me")');
  }
  return { userId: caller.userId, hostOnly: body.host_only ?? false };
}

/** `vastai show subaccounts`: GET /api/v0/subaccounts?owner=me answers `{users: [...]}`. */
@Controller('api/v0/subaccounts')
@Authenticated()
export class SubaccountsController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @RequirePermission('user_read')
  @ApiContract({ query: { owner: str }, ok: ANSWERS.subaccounts, errors: { 400: ['invalid_owner'] } })
  async list(@CallOf() { caller }: Call, @Query('owner') owner?: string) {
    if (owner !== undefined && owner !== 'me' && Number(owner) !== caller.userId) {
      throw new ApiError(400, 'invalid_owner', 'owner must be "me": you can list only your own subaccounts');
    }
    const users = await this.queries.execute(new ListSubaccountsQuery(caller.userId));
    return { success: true, users };
  }
}
