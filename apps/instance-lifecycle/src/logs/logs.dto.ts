import { Allow } from 'class-validator';

/** The CLI sends only the given keys, as strings: {"tail":"100"}, {"filter":"err"}, {"daemon_logs":"true"}. */
export class RequestLogsDto {
  @Allow() tail?: unknown;
  @Allow() filter?: unknown;
  @Allow() daemon_logs?: unknown;
}

/** `vastai execute ID 'ls -l'` sends {"command":"ls -l"} (checked by parseExecCommand). */
export class ExecuteDto {
  @Allow() command?: unknown;
}
