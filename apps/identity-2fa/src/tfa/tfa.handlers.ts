import {
  Command,
  CommandHandler,
  type ICommandHandler,
  type IQueryHandler,
  Query,
  QueryHandler,
} from '@nestjs/cqrs';
import type { EventMetadata } from '@rigmarket/contracts';
import { type ProofInput, type TfaCaller, TfaService } from './tfa.service';

type Body = Record<string, unknown>;
type MethodName = 'sms' | 'totp' | 'email';

// Commands and queries of /api/v0/tfa/ (built by TfaController). The handlers are thin: the 2FA
// service loads the stream, does the secret work and runs the pure decider.

export class CompleteTfaLoginCommand extends Command<{ body: Body; sessionKey: string }> {
  constructor(
    readonly caller: TfaCaller,
    readonly input: ProofInput & { admin?: boolean },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(CompleteTfaLoginCommand)
export class CompleteTfaLoginHandler implements ICommandHandler<CompleteTfaLoginCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: CompleteTfaLoginCommand) {
    return this.tfa.completeLogin(c.caller, c.input, c.metadata);
  }
}

export class SendTfaEmailCodeCommand extends Command<Body> {
  constructor(
    readonly caller: TfaCaller,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(SendTfaEmailCodeCommand)
export class SendTfaEmailCodeHandler implements ICommandHandler<SendTfaEmailCodeCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: SendTfaEmailCodeCommand) {
    return this.tfa.sendEmail(c.caller, c.metadata);
  }
}

export class SendTfaSmsCodeCommand extends Command<Body> {
  constructor(
    readonly caller: TfaCaller,
    readonly phone: string | null,
    readonly methodId: number | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(SendTfaSmsCodeCommand)
export class SendTfaSmsCodeHandler implements ICommandHandler<SendTfaSmsCodeCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: SendTfaSmsCodeCommand) {
    return this.tfa.sendSms(c.caller, c.phone, c.methodId, c.metadata);
  }
}

export class ResendTfaSmsCodeCommand extends Command<Body> {
  constructor(
    readonly caller: TfaCaller,
    readonly secret: string | null,
    readonly phone: string | null,
    readonly methodId: number | null,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(ResendTfaSmsCodeCommand)
export class ResendTfaSmsCodeHandler implements ICommandHandler<ResendTfaSmsCodeCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: ResendTfaSmsCodeCommand) {
    return this.tfa.resendSms(c.caller, c.secret, c.phone, c.methodId, c.metadata);
  }
}

export class GetTfaStatusQuery extends Query<Body> {
  constructor(readonly userId: number) {
    super();
  }
}
@QueryHandler(GetTfaStatusQuery)
export class GetTfaStatusHandler implements IQueryHandler<GetTfaStatusQuery> {
  constructor(private readonly tfa: TfaService) {}
  execute(q: GetTfaStatusQuery) {
    return this.tfa.status(q.userId);
  }
}

export class StartTfaAuthorizationCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly input: { tfa_method?: MethodName; tfa_method_id?: number; backup_code?: string },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(StartTfaAuthorizationCommand)
export class StartTfaAuthorizationHandler implements ICommandHandler<StartTfaAuthorizationCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: StartTfaAuthorizationCommand) {
    return this.tfa.authorizeStart(c.userId, c.input, c.metadata);
  }
}

export class ConfirmTfaAuthorizationCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly code: string | undefined,
    readonly secret: string | undefined,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(ConfirmTfaAuthorizationCommand)
export class ConfirmTfaAuthorizationHandler implements ICommandHandler<ConfirmTfaAuthorizationCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: ConfirmTfaAuthorizationCommand) {
    return this.tfa.authorizeConfirm(c.userId, c.code, c.secret, c.metadata);
  }
}

/** A query: totp-setup stores nothing (no method exists until confirm-new). */
export class NewTotpSecretQuery extends Query<Body> {
  constructor(readonly userId: number) {
    super();
  }
}
@QueryHandler(NewTotpSecretQuery)
export class NewTotpSecretHandler implements IQueryHandler<NewTotpSecretQuery> {
  constructor(private readonly tfa: TfaService) {}
  execute(q: NewTotpSecretQuery) {
    return this.tfa.totpSetup(q.userId);
  }
}

export class ConfirmNewTfaMethodCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly input: {
      tfa_method: 'sms' | 'totp';
      code?: string;
      secret?: string;
      phone_number?: string;
      label?: string;
    },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(ConfirmNewTfaMethodCommand)
export class ConfirmNewTfaMethodHandler implements ICommandHandler<ConfirmNewTfaMethodCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: ConfirmNewTfaMethodCommand) {
    return this.tfa.confirmNew(c.userId, c.input, c.metadata);
  }
}

export class RemoveTfaMethodCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly input: ProofInput & { target_id?: number },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(RemoveTfaMethodCommand)
export class RemoveTfaMethodHandler implements ICommandHandler<RemoveTfaMethodCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: RemoveTfaMethodCommand) {
    return this.tfa.remove(c.userId, c.input, c.metadata);
  }
}

export class UpdateTfaMethodCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly input: { tfa_method_id?: number; tfa_method?: MethodName; label?: string; is_primary?: boolean },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(UpdateTfaMethodCommand)
export class UpdateTfaMethodHandler implements ICommandHandler<UpdateTfaMethodCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: UpdateTfaMethodCommand) {
    return this.tfa.update(c.userId, c.input, c.metadata);
  }
}

export class RegenerateBackupCodesCommand extends Command<Body> {
  constructor(
    readonly userId: number,
    readonly input: ProofInput,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}
@CommandHandler(RegenerateBackupCodesCommand)
export class RegenerateBackupCodesHandler implements ICommandHandler<RegenerateBackupCodesCommand> {
  constructor(private readonly tfa: TfaService) {}
  execute(c: RegenerateBackupCodesCommand) {
    return this.tfa.regenerateBackupCodes(c.userId, c.input, c.metadata);
  }
}

export const tfaHandlers = [
  CompleteTfaLoginHandler,
  SendTfaEmailCodeHandler,
  SendTfaSmsCodeHandler,
  ResendTfaSmsCodeHandler,
  GetTfaStatusHandler,
  StartTfaAuthorizationHandler,
  ConfirmTfaAuthorizationHandler,
  NewTotpSecretHandler,
  ConfirmNewTfaMethodHandler,
  RemoveTfaMethodHandler,
  UpdateTfaMethodHandler,
  RegenerateBackupCodesHandler,
];
