import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Headers, Inject, Param, Query, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  Public,
  RequirePermission,
} from '@rigmarket/http-kit';
import type { Request, Response } from 'express';
import { ANSWERS } from '../instance-lifecycle.openapi';
import { BACKUP_STORE, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { SCHEMA } from '../schema';
import { BACKUP_OPTIONS, type BackupOptions } from './backup-options';
import type { BackupStore } from './backup-store';
import { type BackupRow, findBackup, ownBackups, runBackupCommand } from './backups';

const id = (raw: unknown, what: string): number => {
  const value = Number(raw);
  if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw new ApiError(400, 'invalid_id', `${what} must be a positive integer`);
  return value;
};

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The public base of the download URLs: RIGMARKET_BACKUP_URL, else this server as the caller reached it. */
function downloadBase(request: Request): string {
  const configured = process.env.RIGMARKET_BACKUP_URL;
  if (configured) return configured.replace(/\/+$/, '');
  return `${request.protocol}://${request.get('host') ?? 'localhost'}`;
}

/** The row `vastai show instance-backups` prints (created_at: epoch seconds). */
const listed = (b: BackupRow) => ({
  id: b.backupId,
  contract_id: b.contractId,
  type: b.kind,
  machine_id: b.machineId,
  status: b.status,
  created_at: Math.floor(b.requestedAt.getTime() / 1000),
  info: b.info,
});

/**
 * Backups the platform took of the caller's instances (docs/instances.md, "Instance backups"; docs/api.md):
 * the list and a short-lived download token are the renter's only (another user sees none and gets 404); the
 * object is fetched with that token alone, as the `Authorization` query parameter or header.
 */
@Controller('api/v0/instance_backups')
@Authenticated()
export class InstanceBackupsController {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(BACKUP_STORE) private readonly store: BackupStore,
    @Inject(BACKUP_OPTIONS) private readonly options: BackupOptions,
  ) {}

  /** `vastai show instance-backups [--contract-id N]`: newest first. */
  @Get()
  @RequirePermission('instance_read')
  @ApiContract({ query: { contract_id: { type: 'integer' } }, ok: ANSWERS.instanceBackups })
  async list(@Query('contract_id') contractRaw: unknown, @CallOf() { caller }: Call) {
    const contractId =
      contractRaw === undefined || contractRaw === '' ? null : id(contractRaw, 'contract_id');
    const backups = await ownBackups(this.runtime.db, caller.userId, contractId);
    return { success: true, backups: backups.map(listed) };
  }

  /**
   * `vastai show instance-backup-files CONTRACT_ID`: the objects of the contract's newest backup, with a new
   * download token (only its SHA-256 is kept). A backup still pending, or failed, lists no objects.
   */
  @Get(':contractId/download')
  @RequirePermission('instance_read')
  @ApiContract({ ok: ANSWERS.instanceBackupFiles, errors: { 400: ['invalid_id'], 404: ['no_such_backup'] } })
  async download(
    @Param('contractId') contractRaw: string,
    @Req() request: Request,
    @CallOf() { caller, metadata }: Call,
  ) {
    const contractId = id(contractRaw, 'The contract id');
    const [backup] = await ownBackups(this.runtime.db, caller.userId, contractId, 1);
    if (!backup) throw ApiError.notFound(`No backup of contract ${contractId}`, 'no_such_backup');
    if (backup.status !== 'success')
      return {
        success: true,
        authorization_token: null,
        expires_in_sec: 0,
        truncated: false,
        files: [],
        msg:
          backup.status === 'pending'
            ? 'The backup is still being taken'
            : `The backup failed: ${backup.info}`,
      };
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.options.tokenTtlMs).toISOString();
    await runBackupCommand(
      this.runtime,
      backup.backupId,
      {
        type: 'AuthorizeDownload',
        requesterId: caller.userId,
        tokenHash: sha256(token).toString('hex'),
        expiresAt,
      },
      metadata,
    );
    const base = `${downloadBase(request)}/api/v0/instance_backups/files/${backup.backupId}`;
    return {
      success: true,
      authorization_token: token,
      expires_in_sec: Math.round(this.options.tokenTtlMs / 1000),
      truncated: false,
      files: backup.files.map((f) => ({
        name: f.name,
        size: f.size,
        url: `${base}/${encodeURIComponent(f.name)}`,
      })),
    };
  }

  /**
   * One object of a backup, for whoever holds a token of that backup that has not expired: as the
   * `Authorization` query parameter (the URLs `show instance-backup-files` prints) or header (alone, or
   * after `Bearer `). Any other value is refused with 403, whether the backup exists or not.
   */
  @Get('files/:backupId/:name')
  @Public()
  @ApiContract({
    query: { Authorization: { type: 'string' } },
    ok: ANSWERS.backupObject,
    mediaType: 'application/x-tar',
    errors: { 400: ['invalid_id'], 401: ['missing_token'], 403: ['invalid_token'], 404: ['not_found'] },
  })
  async file(
    @Param('backupId') backupRaw: string,
    @Param('name') name: string,
    @Query('Authorization') fromQuery: unknown,
    @Headers('authorization') fromHeader: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    const backupId = id(backupRaw, 'The backup id');
    const token =
      typeof fromQuery === 'string' && fromQuery !== ''
        ? fromQuery
        : fromHeader?.replace(/^Bearer\s+/i, '').trim();
    if (!token)
      throw new ApiError(
        401,
        'missing_token',
        'Send the download token as ?Authorization= or an Authorization header',
      );
    await this.checkToken(backupId, token);
    const backup = await findBackup(this.runtime.db, backupId);
    const object =
      backup?.status === 'success' && backup.files.some((f) => f.name === name)
        ? await this.store.open(backupId, name)
        : null;
    if (!object) throw ApiError.notFound(`No object ${name} in backup ${backupId}`, 'not_found');
    response.setHeader('Content-Type', 'application/x-tar');
    response.setHeader('Content-Length', String(object.size));
    response.setHeader('Content-Disposition', `attachment; filename="backup-${backupId}-${name}"`);
    response.setHeader('Cache-Control', 'no-store');
    return new StreamableFile(object.stream);
  }

  /** The token's hash names a token of this backup that has not expired (compared in constant time). */
  private async checkToken(backupId: number, token: string): Promise<void> {
    const hash = sha256(token);
    const rows = await this.runtime.db.query<{ token_hash: string; backup_id: number; live: boolean }>(
      `SELECT token_hash, backup_id, expires_at > now() AS live FROM ${SCHEMA}.instance_backup_tokens
        WHERE token_hash = $1`,
      [hash.toString('hex')],
    );
    const row = rows[0];
    const matches =
      row !== undefined && timingSafeEqual(Buffer.from(row.token_hash, 'hex'), hash) && row.live;
    if (!matches || Number(row.backup_id) !== backupId)
      throw new ApiError(
        403,
        'invalid_token',
        'The download token is wrong or has expired; list the files again',
      );
  }
}
