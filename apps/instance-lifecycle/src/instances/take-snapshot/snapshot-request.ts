import { ApiError } from '@rigmarket/contracts';

/** What `vastai take snapshot` sends (docs/client-compat.md 2.5): `id` and `pause` as strings. */
export interface TakeSnapshotBody {
  container_registry?: unknown;
  personal_repo?: unknown;
  docker_login_user?: unknown;
  docker_login_pass?: unknown;
  pause?: unknown;
}

export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress: string;
}

export interface SnapshotRequest {
  /** `registry/repo:tag`: where the host pushes the committed container. */
  image: string;
  pause: boolean;
  /** null: push without credentials (a registry that takes anonymous pushes). */
  auth: RegistryAuth | null;
}

// The Docker reference grammar (distribution/reference): a host[:port], path components, a tag.
const REGISTRY = /^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]{1,5})?$/;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const MAX_LOGIN = 1024;

const text = (value: unknown, field: string, max: number): string | null => {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > max)
    throw ApiError.badRequest(`${field} must be a string of at most ${max} characters`);
  return value;
};

/**
 * The snapshot's image reference and registry login from the CLI's body, checked: a registry host (default
 * docker.io), a repository of lower-case path components with an optional tag (default latest), pause
 * "true"/"false" (default true), and the login's user and password together or neither.
 */
export function parseSnapshotRequest(body: TakeSnapshotBody): SnapshotRequest {
  const registry = text(body.container_registry, 'container_registry', 255) ?? 'docker.io';
  if (!REGISTRY.test(registry))
    throw ApiError.badRequest(
      `container_registry must be a registry host such as docker.io or 127.0.0.1:5000`,
    );
  const repo = text(body.personal_repo, 'personal_repo (--repo)', 255);
  if (repo === null) throw ApiError.badRequest('Give the repository to push the snapshot to (--repo)');
  const colon = repo.lastIndexOf(':');
  const path = colon > repo.lastIndexOf('/') && colon >= 0 ? repo.slice(0, colon) : repo;
  const tag = path === repo ? 'latest' : repo.slice(colon + 1);
  if (!path.split('/').every((c) => COMPONENT.test(c)) || !TAG.test(tag))
    throw ApiError.badRequest(
      'personal_repo (--repo) must be a repository name (lower-case letters, digits, . _ - and /) with an optional :tag',
    );
  const pause = body.pause ?? 'true';
  if (!['true', 'false', true, false].includes(pause as string | boolean))
    throw ApiError.badRequest('pause must be true or false');
  const username = text(body.docker_login_user, 'docker_login_user', MAX_LOGIN);
  const password = text(body.docker_login_pass, 'docker_login_pass', MAX_LOGIN);
  if ((username === null) !== (password === null))
    throw ApiError.badRequest('Give both docker_login_user and docker_login_pass, or neither');
  return {
    image: `${registry}/${path}:${tag}`,
    pause: pause === true || pause === 'true',
    auth: username !== null && password !== null ? { username, password, serveraddress: registry } : null,
  };
}
