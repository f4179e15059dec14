import { PickType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

// Request bodies of /api/v0/tfa/, validated after the AuthGuard has authenticated the caller.

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

/** Which method sends the authorization code, or a backup code that authorizes at once. */
export class AuthorizeRequest extends PickType(ProofRequest, [
  'tfa_method',
  'tfa_method_id',
  'backup_code',
]) {}

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
