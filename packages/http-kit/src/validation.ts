import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';

function describe(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((e) => {
    const path = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => m.replace(e.property, path));
    return [...own, ...describe(e.children ?? [], path)];
  });
}

/**
 * class-validator on every body. Unknown keys are dropped, not refused: real clients send extras
 * (client_id, extra, force...). A failure answers 400 bad_request naming each field.
 */
export function apiValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    exceptionFactory: (errors) => ApiError.badRequest(`Invalid request: ${describe(errors).join('; ')}`),
  });
}
