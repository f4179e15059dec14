import { ApiError } from '@rigmarket/contracts';
import { parseSnapshotRequest } from './snapshot-request';

const refusal = (body: object): string => {
  try {
    parseSnapshotRequest(body);
  } catch (error) {
    if (error instanceof ApiError) return `${error.status} ${error.message}`;
    throw error;
  }
  return 'accepted';
};

describe('take snapshot request (what vastai take snapshot sends)', () => {
  it("builds the image reference from the CLI's defaults: docker.io, tag latest, paused", () => {
    expect(
      parseSnapshotRequest({
        id: '12',
        container_registry: 'docker.io',
        personal_repo: 'alice/train',
        docker_login_user: 'alice',
        docker_login_pass: 'token',
        pause: 'true',
      } as object),
    ).toEqual({
      image: 'docker.io/alice/train:latest',
      pause: true,
      auth: { username: 'alice', password: 'token', serveraddress: 'docker.io' },
    });
  });

  it('keeps a tag and a registry with a port; pause false; no login at all is a push without credentials', () => {
    expect(
      parseSnapshotRequest({
        container_registry: '127.0.0.1:5000',
        personal_repo: 'a/b-c_d.e:v1.2',
        pause: 'false',
      }),
    ).toEqual({ image: '127.0.0.1:5000/a/b-c_d.e:v1.2', pause: false, auth: null });
  });

  it('refuses a missing or malformed repository, a bad registry, a half login and a pause that is not a boolean', () => {
    expect(refusal({ container_registry: 'docker.io' })).toMatch(/^400 Give the repository/);
    expect(refusal({ personal_repo: 'Alice/Train' })).toMatch(/^400 personal_repo/);
    expect(refusal({ personal_repo: 'a//b' })).toMatch(/^400 personal_repo/);
    expect(refusal({ personal_repo: 'a/b:' })).toMatch(/^400 personal_repo/);
    expect(refusal({ personal_repo: 'a/b', container_registry: 'https://docker.io' })).toMatch(
      /^400 container_registry/,
    );
    expect(refusal({ personal_repo: 'a/b', docker_login_user: 'u' })).toMatch(/^400 Give both/);
    expect(refusal({ personal_repo: 'a/b', pause: 'maybe' })).toMatch(/^400 pause/);
    expect(refusal({ personal_repo: 'a'.repeat(300) })).toMatch(/^400 personal_repo/);
  });
});
