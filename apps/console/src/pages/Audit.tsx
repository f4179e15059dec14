import { Code, Stack, Table, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ErrorAlert } from '../ui';
import { api, ok } from '../api/client';
import { when } from '../format';

/** The account's audit log (docs/audit.md): the newest 100 actions, who made them (key), from where, with what. */
export function AuditPage() {
  const log = useQuery({
    queryKey: ['audit'],
    queryFn: () => ok(api.GET('/api/v0/audit_logs', { params: { query: { limit: 100 } } })),
    refetchInterval: 15_000,
  });
  return (
    <Stack>
      <Title order={1} size="h2">
        Audit log
      </Title>
      <ErrorAlert error={log.error} />
      <Table.ScrollContainer minWidth={720}>
        <Table aria-label="Audit log">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>Object</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>From</Table.Th>
              <Table.Th>Details</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(log.data ?? []).map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td>{when(e.created_at)}</Table.Td>
                <Table.Td>{e.action}</Table.Td>
                <Table.Td>{e.object}</Table.Td>
                <Table.Td>{e.api_key_id ?? '–'}</Table.Td>
                <Table.Td>{e.ip_address ?? '–'}</Table.Td>
                <Table.Td>
                  <Code>{JSON.stringify(e.args).slice(0, 120)}</Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
