import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '../../..');
const apps = readdirSync(join(root, 'apps'));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('bounded contexts stay apart', () => {
  it.each(apps.filter((a) => a !== 'platform'))('%s imports no other app (only packages/)', (app) => {
    const offending = sources(join(root, 'apps', app, 'src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '(@rigmarket\/[\w-]+|\.\.\/\.\.\/\.\.\/apps[^']*)'/g)]
        .map((m) => m[1]!)
        .filter(
          (target) =>
            apps.some((other) => other !== app && target.endsWith(`/${other}`)) || target.includes('/apps'),
        )
        .map((target) => `${relative(root, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('packages depend on no app', () => {
    const offending = sources(join(root, 'packages')).filter(
      (file) =>
        !file.includes('node_modules') &&
        apps.some((app) => readFileSync(file, 'utf8').includes(`'@rigmarket/${app}'`)),
    );
    expect(offending).toEqual([]);
  });

  it('deciders know nothing of HTTP: they refuse with domain error codes, never ApiError or a status', () => {
    const deciders = apps.flatMap((app) =>
      sources(join(root, 'apps', app, 'src')).filter((file) => file.endsWith('.decider.ts')),
    );
    expect(deciders.length).toBeGreaterThan(10);
    const offending = deciders.filter((file) =>
      /\bApiError\b|@nestjs\/|HttpException|\bstatus: [1-5]\d\d\b/.test(readFileSync(file, 'utf8')),
    );
    expect(offending.map((file) => relative(root, file))).toEqual([]);
  });
});
