import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderEventCatalog } from './event-catalog';
import { PUBLIC_EVENTS } from './schema-registry';

describe('the public event catalog (docs/events/README.md)', () => {
  const root = join(__dirname, '..', '..', '..');
  const rendered = renderEventCatalog(join(root, 'packages', 'contracts', 'src'));

  it('lists every public event with its topic, version and payload fields', () => {
    for (const events of Object.values(PUBLIC_EVENTS)) {
      for (const type of Object.keys(events)) expect(rendered).toContain(`### ${type}\n`);
    }
    expect(rendered).toContain(
      'topic `rigmarket.instance-lifecycle.instance.v1`, stream `instance-<id>`, schema version 1 (`instance.ts`)',
    );
    expect(rendered).toMatch(
      /### ApiKeyDeleted\n\n.*\n\n\| field \| type \|\n\|---\|---\|\n\| keyId \| `number` \|\n\| deletedAt \| `string` \|/,
    );
  });

  it('is current: regenerate it with `npm run events:catalog` after changing a public event', () => {
    const committed = readFileSync(join(root, 'docs', 'events', 'README.md'), 'utf8');
    expect(committed).toBe(rendered);
  });
});
