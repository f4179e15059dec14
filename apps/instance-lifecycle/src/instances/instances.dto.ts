import { Allow, IsArray, IsIn, IsOptional, IsString } from 'class-validator';

/**
 * PUT /api/v0/asks/{offer_id}/: every creation field of the spec (and the CLI's extras, ignored).
 * Shapes are checked by parseCreateRequest, whose messages say what is wrong (an env string, a
 * template_id instead of template_hash_id...), so the fields are only declared here.
 */
export class CreateInstanceDto {
  @Allow() image?: unknown;
  @Allow() template_hash_id?: unknown;
  @Allow() template_id?: unknown;
  @Allow() label?: unknown;
  @Allow() disk?: unknown;
  @Allow() runtype?: unknown;
  @Allow() target_state?: unknown;
  @Allow() price?: unknown;
  @Allow() env?: unknown;
  @Allow() onstart?: unknown;
  @Allow() args_str?: unknown;
  @Allow() args?: unknown;
  @Allow() use_jupyter_lab?: unknown;
  @Allow() jupyter_dir?: unknown;
  @Allow() python_utf8?: unknown;
  @Allow() lang_utf8?: unknown;
  @Allow() image_login?: unknown;
  @Allow() cancel_unavail?: unknown;
  @Allow() vm?: unknown;
  @Allow() volume_info?: unknown;
  @Allow() extra_filters?: unknown;
}

/** PUT /api/v0/instances/{id}/ and the bulk form with ids. */
export class UpdateInstanceDto {
  @IsOptional()
  @IsIn(['running', 'stopped'], { message: 'state must be running or stopped' })
  state?: 'running' | 'stopped';

  @IsOptional()
  @IsString({ message: 'label must be a string' })
  label?: string;

  @IsOptional()
  @IsArray({ message: 'ids must be a list of instance ids' })
  ids?: unknown[];
}

/** DELETE /api/v0/instances/ (bulk). */
export class DestroyInstancesDto {
  @IsOptional()
  @IsArray({ message: 'instance_ids must be a list of instance ids' })
  instance_ids?: unknown[];
}

/** PUT /api/v0/instances/bid_price/{id}/: {"client_id":"me","price":0.3} (a number or a numeric string). */
export class ChangeBidDto {
  @Allow() price?: unknown;
}

/** POST /api/v0/asks/bulk/ (`vastai create instances ID...`): the creation body plus the offer ids. */
export class BulkCreateInstancesDto extends CreateInstanceDto {
  @Allow() ids?: unknown;
}

/** PUT /api/v0/launch_instance/ (`vastai launch instance -g GPU -n N -i IMAGE`): the creation body plus an offer query. */
export class LaunchInstanceDto extends CreateInstanceDto {
  @Allow() q?: unknown;
}

/** PUT /api/v0/instances/update_template/{id}/ (`vastai update instance`): checked by parseUpdateRequest. */
export class UpdateTemplateDto {
  @Allow() id?: unknown;
  @Allow() template_id?: unknown;
  @Allow() template_hash_id?: unknown;
  @Allow() image?: unknown;
  @Allow() args?: unknown;
  @Allow() env?: unknown;
  @Allow() onstart?: unknown;
}
