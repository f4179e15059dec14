import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { contextProjections } from '@rigmarket/event-sourcing';
import { ALL_CONTEXTS } from './platform';

const root = join(__dirname, '..', '..', '..');
const APPS = {
  identity: 'identity-2fa',
  marketplace: 'marketplace-api',
  instance: 'instance-lifecycle',
  sync: 'sync-maintenance',
};

/** Where each context keeps its read side (docs/architecture.md, Read side). */
describe('read-side layout of every app', () => {
  for (const context of ALL_CONTEXTS) {
    const app = join(root, 'apps', APPS[context.context], 'src');

    it(`${APPS[context.context]}: every projection has a read-models/<name>/ folder with a projectionSpec`, () => {
      const missing: string[] = [];
      for (const projection of contextProjections(context)) {
        // auth_api_keys is every app's projection of identity's keys: its spec is in packages/http-kit.
        const spec =
          projection.name === 'auth_api_keys'
            ? join(root, 'packages', 'http-kit', 'src', 'auth-keys.projection.spec.ts')
            : join(app, 'read-models', projection.name.replace(/_/g, '-'), 'projection.spec.ts');
        if (!existsSync(spec) || !readFileSync(spec, 'utf8').includes('projectionSpec('))
          missing.push(projection.name);
      }
      expect(missing).toEqual([]);
    });

    it(`${APPS[context.context]}: migrations/ holds one file per migration, numbered 0001.. in the order they run`, () => {
      const files = readdirSync(join(app, 'migrations'))
        .filter((f) => /^\d{4}-.*\.ts$/.test(f))
        .sort();
      expect(files.map((f) => Number(f.slice(0, 4)))).toEqual(files.map((_, i) => i + 1));
      expect(context.migrations.map((m) => `${m.id}.ts`)).toEqual(files);
    });
  }
});
