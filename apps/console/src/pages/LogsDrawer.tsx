import { Code, Drawer, Group, ScrollArea, Stack, Switch, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ErrorAlert } from '../ui';
import { api, type Instance, ok } from '../api/client';

const FOLLOW_MS = 2_000;
const TAIL_LINES = '1000';

/**
 * An instance's logs: request_logs asks for the last lines, then the text is read from result_url (a path
 * on this origin). While "Follow" is on it asks again every two seconds and keeps the newest line in view.
 */
async function readLogs(id: number): Promise<string> {
  const { result_url } = await ok(
    api.PUT('/api/v0/instances/request_logs/{id}', { params: { path: { id } }, body: { tail: TAIL_LINES } }),
  );
  // The URL names the host the request reached; read it from this origin (the CSP allows no other).
  const url = new URL(result_url, window.location.origin);
  for (let attempt = 0; attempt < 10; attempt++) {
    const answer = await fetch(url.pathname);
    if (answer.ok) return answer.text();
    if (answer.status !== 404) throw new Error(`The logs answered ${answer.status}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return '';
}

export function LogsDrawer({ instance, onClose }: { instance: Instance | null; onClose: () => void }) {
  const [follow, setFollow] = useState(true);
  const viewport = useRef<HTMLDivElement>(null);
  const logs = useQuery({
    queryKey: ['logs', instance?.id],
    queryFn: () => readLogs(instance!.id),
    enabled: instance !== null,
    refetchInterval: follow ? FOLLOW_MS : false,
  });
  useEffect(() => {
    if (follow && viewport.current) viewport.current.scrollTo({ top: viewport.current.scrollHeight });
  }, [logs.data, follow]);

  return (
    <Drawer
      opened={instance !== null}
      onClose={onClose}
      position="right"
      size="xl"
      title={`Logs of instance #${instance?.id ?? ''}`}
    >
      <Stack>
        <Group justify="space-between">
          <Switch label="Follow" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />
          <Text size="xs" c="dimmed" role="status">
            {logs.isFetching
              ? 'reading…'
              : logs.dataUpdatedAt
                ? `read ${new Date(logs.dataUpdatedAt).toLocaleTimeString()}`
                : ''}
          </Text>
        </Group>
        <ErrorAlert error={logs.error} />
        <ScrollArea h="70vh" viewportRef={viewport} type="auto">
          <Code block aria-label="Log lines" tabIndex={0}>
            {logs.data || (logs.isLoading ? 'Reading…' : 'No log lines yet.')}
          </Code>
        </ScrollArea>
      </Stack>
    </Drawer>
  );
}
