import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContextName } from './envelope';
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

const CONTEXT_SOURCES: Record<ContextName, { file: string; app: string }> = {
  identity: { file: 'identity.ts', app: 'identity-2fa' },
  marketplace: { file: 'marketplace.ts', app: 'marketplace-api' },
  instance: { file: 'instance.ts', app: 'instance-lifecycle' },
  sync: { file: 'sync.ts', app: 'sync-maintenance' },
};

interface EventDoc {
  type: string;
  summary: string;
  fields: Array<{ name: string; type: string; optional: boolean }>;
}

/** Reads every `DomainEvent<'Type', {...}>` alias of one contracts file with its payload fields. */
function eventDocs(sourceDir: string, file: string): Map<string, EventDoc> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily: tooling only
  const ts = require('typescript') as typeof import('typescript');
  const path = join(sourceDir, file);
  const program = ts.createProgram([path], { strict: true, target: ts.ScriptTarget.ES2022, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path);
  const docs = new Map<string, EventDoc>();
  if (!source) throw new Error(`cannot read ${path}`);
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
      type: checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, statement), statement, ts.TypeFormatFlags.NoTruncation),
      optional: (prop.flags & ts.SymbolFlags.Optional) !== 0,
    }));
    const jsDoc = ts.getJSDocCommentsAndTags(statement).map((d) => ts.getTextOfJSDocComment(d.comment) ?? '');
    docs.set(literal.value, { type: literal.value, summary: jsDoc.join(' ').replace(/\s+/g, ' ').trim(), fields });
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
    'payload schema version (consumers upcast older ones and skip unknown types) and the payload fields.',
    "Private events (a context's internal streams, e.g. allocation or 2FA) are not listed: read them with",
    '`npm run rigmarket -- history <context> <stream-id>` (docs/operations.md).',
    '',
  ];
  for (const context of Object.keys(CONTEXT_SOURCES) as ContextName[]) {
    const { file, app } = CONTEXT_SOURCES[context];
    const docs = eventDocs(sourceDir, file);
    lines.push(`## ${app} (\`packages/contracts/src/${file}\`)`, '');
    for (const [type, spec] of Object.entries(PUBLIC_EVENTS[context])) {
      const doc = docs.get(type);
      if (!doc) throw new Error(`${type} is registered as public in ${context} but no DomainEvent<'${type}', ...> is declared in ${file}`);
      lines.push(`### ${type}`, '');
      lines.push(`topic \`${topicFor(context, spec.streamType)}\`, stream \`${spec.streamType}-<id>\`, schema version ${spec.schemaVersion}`, '');
      if (doc.summary) lines.push(doc.summary, '');
      lines.push('| field | type |', '|---|---|');
      for (const field of doc.fields) lines.push(`| ${field.name}${field.optional ? '?' : ''} | \`${cell(field.type)}\` |`);
      lines.push('');
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
