import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ContextName } from './envelope';
import { PUBLIC_EVENT_SCHEMAS } from './event-schemas';
import { PUBLIC_EVENTS } from './schema-registry';
import { topicFor } from './topics';

/**
 * The public event catalog (docs/events/README.md), generated from this package's sources, so operators
 * replaying streams and teams consuming another context's topics read what the code really promises:
 * each public event's topic, stream type, schema version and payload fields.
 *
 * Build-time tooling only (it loads the TypeScript compiler), so it is not exported from index.ts.
 * Regenerate with `npm run events:catalog`; a unit spec fails when the committed catalog is stale.
 */

const CONTEXT_APPS: Record<ContextName, string> = {
  identity: 'identity-2fa',
  marketplace: 'marketplace-api',
  instance: 'instance-lifecycle',
  sync: 'sync-maintenance',
};

interface EventDoc {
  type: string;
  file: string;
  summary: string;
  fields: Array<{ name: string; type: string; optional: boolean }>;
}

/** Reads every `DomainEvent<'Type', {...}>` alias of the contracts sources with its payload fields. */
function eventDocs(sourceDir: string): Map<string, EventDoc> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily: tooling only
  const ts = require('typescript') as typeof import('typescript');
  const files = readdirSync(sourceDir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !/\.(int-|e2e-)?spec\.ts$/.test(f))
    .sort();
  const program = ts.createProgram(
    files.map((f) => join(sourceDir, f)),
    { strict: true, target: ts.ScriptTarget.ES2022, skipLibCheck: true, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const docs = new Map<string, EventDoc>();
  for (const file of files) {
    const source = program.getSourceFile(join(sourceDir, file));
    if (!source) throw new Error(`cannot read ${file}`);
    for (const statement of source.statements) {
      if (!ts.isTypeAliasDeclaration(statement)) continue;
      const type = checker.getTypeAtLocation(statement.name);
      const typeProp = type.getProperty('type');
      const dataProp = type.getProperty('data');
      if (!typeProp || !dataProp) continue;
      const literal = checker.getTypeOfSymbolAtLocation(typeProp, statement);
      if (!literal.isStringLiteral()) continue;
      const data = checker.getTypeOfSymbolAtLocation(dataProp, statement);
      const fields = checker.getPropertiesOfType(data).map((prop) => ({
        name: prop.getName(),
        type: checker.typeToString(
          checker.getTypeOfSymbolAtLocation(prop, statement),
          statement,
          ts.TypeFormatFlags.NoTruncation,
        ),
        optional: (prop.flags & ts.SymbolFlags.Optional) !== 0,
      }));
      const jsDoc = ts
        .getJSDocCommentsAndTags(statement)
        .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '');
      docs.set(literal.value, {
        type: literal.value,
        file,
        summary: jsDoc.join(' ').replace(/\s+/g, ' ').trim(),
        fields,
      });
    }
  }
  return docs;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function renderEventCatalog(sourceDir: string): string {
  const lines = [
    '# Public event catalog',
    '',
    'Generated from `packages/contracts/src` by `npm run events:catalog` (a unit spec fails when it is stale);',
    'do not edit by hand. These are the integration events each context promises to the others: the topic',
    '(`rigmarket.<context>.<aggregate>.v<major>`, Kafka message key = stream id), the stream type, the current',
    'payload schema version (consumers upcast older ones and skip unknown types), the payload fields, and the',
    'runtime schema (`event-schemas.ts`, JSON Schema below) every consumer checks before a projection or',
    'reactor applies the event: one that does not match is parked with the reason, never applied.',
    "Private events (a context's internal streams, e.g. allocation or 2FA) are not listed: read them with",
    '`npm run rigmarket -- history <context> <stream-id>` (docs/operations.md).',
    '',
  ];
  const docs = eventDocs(sourceDir);
  for (const context of Object.keys(CONTEXT_APPS) as ContextName[]) {
    lines.push(`## ${CONTEXT_APPS[context]}`, '');
    for (const [type, spec] of Object.entries(PUBLIC_EVENTS[context])) {
      const doc = docs.get(type);
      if (!doc)
        throw new Error(
          `${type} is registered as public in ${context} but no DomainEvent<'${type}', ...> is declared in packages/contracts/src`,
        );
      lines.push(`### ${type}`, '');
      lines.push(
        `topic \`${topicFor(context, spec.streamType)}\`, stream \`${spec.streamType}-<id>\`, schema version ${spec.schemaVersion} (\`${doc.file}\`)`,
        '',
      );
      if (doc.summary) lines.push(doc.summary, '');
      lines.push('| field | type |', '|---|---|');
      for (const field of doc.fields)
        lines.push(`| ${field.name}${field.optional ? '?' : ''} | \`${cell(field.type)}\` |`);
      lines.push('');
      const schema = PUBLIC_EVENT_SCHEMAS[context][type];
      if (!schema) throw new Error(`${type} is registered as public in ${context} but has no runtime schema`);
      lines.push(
        '<details><summary>runtime schema</summary>',
        '',
        '```json',
        JSON.stringify(z.toJSONSchema(schema, { io: 'input' })),
        '```',
        '',
        '</details>',
        '',
      );
    }
  }
  return lines.join('\n');
}

/** `npm run events:catalog`: writes docs/events/README.md (run from the repo root after a build). */
if (require.main === module) {
  const root = join(__dirname, '..', '..', '..');
  const target = join(root, 'docs', 'events', 'README.md');
  writeFileSync(target, renderEventCatalog(join(root, 'packages', 'contracts', 'src')));
  console.log(`wrote ${target}`);
}
