import { Body, Controller, Get, HttpCode, Post, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  Public,
  RequestMetadata,
  RequirePermission,
} from '@rigmarket/http-kit';
import { IsEmail, IsOptional, IsString, Length, MaxLength, MinLength } from 'class-validator';
import {
  ChangePasswordCommand,
  GetUserQuery,
  LoginCommand,
  LogoutCommand,
  RegisterUserCommand,
  VerifyEmailCommand,
} from './users.handlers';
import { ANSWERS, BODIES, USER } from '../identity.openapi';

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

  @Public()
  @Post()
  @ApiContract({
    status: 201,
    body: BODIES.register,
    ok: ANSWERS.registered,
    errors: { 409: ['user_exists'] },
  })
  async register(@Body() body: RegisterRequest, @RequestMetadata() metadata: EventMetadata) {
    const { user } = await this.commands.execute(
      new RegisterUserCommand(
        body.email,
        body.password,
        body.username ?? null,
        body.full_name ?? null,
        metadata,
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

  @Get('current')
  @RequirePermission('user_read')
  @ApiContract({ ok: USER, errors: { 404: ['user_not_found'] } })
  current(@CallOf() { caller: principal }: Call) {
    return this.queries.execute(new GetUserQuery(principal.userId));
  }
}
