import type { ContextName } from './envelope';

const CONTEXT_TOPIC_NAMES: Record<ContextName, string> = {
  identity: 'identity-2fa',
  marketplace: 'marketplace-api',
  instance: 'instance-lifecycle',
  sync: 'sync-maintenance',
};

/** One topic per aggregate type keeps per-stream order: `rigmarket.<context>.<aggregate>.v<major>`. */
export function topicFor(context: ContextName, streamType: string, major = 1): string {
  return `rigmarket.${CONTEXT_TOPIC_NAMES[context]}.${streamType}.v${major}`;
}

/** Aggregate (stream) types per context, so topics can be created up front. */
export const STREAM_TYPES: Record<ContextName, readonly string[]> = {
  identity: ['user', 'api_key', 'team_role'],
  marketplace: ['machine', 'template', 'volume', 'ledger'],
  instance: ['instance', 'hostagent', 'agentcopy', 'cloud_connections', 'scheduledcall', 'volumecopy'],
  sync: ['sync', 'maintenance'],
};

export function allTopics(): string[] {
  return (Object.keys(STREAM_TYPES) as ContextName[]).flatMap((context) =>
    STREAM_TYPES[context].map((type) => topicFor(context, type)),
  );
}

export function deadLetterTopicFor(topic: string): string {
  return `${topic}.dlq`;
}
