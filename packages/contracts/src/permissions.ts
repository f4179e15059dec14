/** Permission categories of scoped API keys (docs/client-compat.md 2.8). */
export const PERMISSION_CATEGORIES = [
  'misc',
  'user_read',
  'user_write',
  'instance_read',
  'instance_write',
  'billing_read',
  'billing_write',
  'machine_read',
  'machine_write',
  'team_read',
  'team_write',
] as const;

export type PermissionCategory = (typeof PERMISSION_CATEGORIES)[number];

export function isPermissionCategory(value: string): value is PermissionCategory {
  return (PERMISSION_CATEGORIES as readonly string[]).includes(value);
}

/** `{api: {<category>: {}}}`; constraints inside a category are kept but not interpreted yet. */
export interface PermissionsObject {
  api: Partial<Record<PermissionCategory, Record<string, unknown>>>;
}

/** null = full access (the default scope of a key). */
export type KeyScope = PermissionsObject | null;

export function fullAccessPermissions(): PermissionsObject {
  return { api: Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, {}])) };
}

export function scopeAllows(scope: KeyScope, category: PermissionCategory): boolean {
  if (scope === null) return true;
  return Object.prototype.hasOwnProperty.call(scope.api, category);
}

/** The categories a scope grants (all of them for full access). */
export function grantedCategories(scope: KeyScope): PermissionCategory[] {
  if (scope === null) return [...PERMISSION_CATEGORIES];
  return PERMISSION_CATEGORIES.filter((c) => scopeAllows(scope, c));
}
